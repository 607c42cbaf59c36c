import type { Db } from './client';
import type { DenyRuleRow } from './paymasterPolicies';
import { MERCHANT_LIMIT_COLUMNS, type MerchantLimitColumns } from './paymasterLimits';
import { storedResultInSignerOrder } from './paymasterUsage';
import { preparedStatement, runPrepared } from './preparedStatements';
import type {
  PolicyAllowlistEntry,
  PolicyApprovalWebhook,
  PolicyBudget,
  StoredPaymasterResult,
} from './schema';

/**
 * Everything the paymaster RPC reads about a merchant before it decides, in one statement (one round
 * trip instead of four): the deny rules matching the operation's accounts and targets, which of its
 * targets are allowlisted, what an identical signing request already answered (by its fingerprint), and
 * the merchant's own limits. Each part is the query it replaces (db/paymasterPolicies.ts
 * `findMatchingDenyRules`, `findAllowlistedAddresses`; db/paymasterUsage.ts `findSignedResult`;
 * db/paymasterLimits.ts `findMerchantLimits`), read in one snapshot.
 */
export interface PaymasterDecisionReads {
  denyRules: Pick<DenyRuleRow, 'kind' | 'address'>[];
  allowlisted: Set<string>;
  /** Undefined when no fingerprint was given or nothing was signed for it. */
  signedResult: StoredPaymasterResult | undefined;
  /** Null when the merchant set no limits of its own. */
  merchantLimits: MerchantLimitColumns | null;
  /** The client's sponsorship policies in their order (migration 1200). */
  policies: SponsorshipPolicyRules[];
}

/** A sponsorship policy as the decision reads it (db/paymasterSponsorshipPolicies.ts writes it). */
export interface SponsorshipPolicyRules {
  id: string;
  name: string;
  /** Null: every chain the client allows. */
  chainIds: number[] | null;
  /** Null: the merchant's shared allowlist. */
  allowlist: PolicyAllowlistEntry[] | null;
  startsAt: Date | null;
  endsAt: Date | null;
  budgets: PolicyBudget[];
  approvalWebhook: PolicyApprovalWebhook | null;
}

type StoredPolicyRules = Omit<SponsorshipPolicyRules, 'startsAt' | 'endsAt'> & {
  startsAt: string | null;
  endsAt: string | null;
};

type DecisionReadsRow = {
  deny_rules: { kind: DenyRuleRow['kind']; address: string }[];
  allowlisted: string[];
  signed_result: StoredPaymasterResult | null;
  has_limits: boolean;
  policies: StoredPolicyRules[];
} & MerchantLimitColumns;

/**
 * The statement, prepared (db/preparedStatements.ts): it runs once per paymaster request. Parameters:
 * merchant, chain, senders, deny targets, allowlist targets, whether a fingerprint is looked up, its
 * entry point, the fingerprint, the client (row id).
 */
const DECISION_READS = preparedStatement<
  DecisionReadsRow,
  [string, number, string[], string[], string[], boolean, string, string, string]
>(
  'paymaster_decision_reads_v2',
  `SELECT
    (SELECT coalesce(json_agg(json_build_object('kind', rule.kind, 'address', rule.address)), '[]'::json)
      FROM paymaster_deny_rules AS rule
      WHERE rule.merchant_id = $1::uuid AND rule.chain_id = $2::integer
        AND ((rule.kind = 'sender' AND rule.address = ANY($3::text[]))
          OR (rule.kind = 'target' AND rule.address = ANY($4::text[])))
    ) AS deny_rules,
    (SELECT coalesce(array_agg(entry.contract_address), '{}'::text[])
      FROM paymaster_allowlist_entries AS entry
      WHERE entry.merchant_id = $1::uuid AND entry.chain_id = $2::integer
        AND entry.contract_address = ANY($5::text[])
    ) AS allowlisted,
    (SELECT usage.signed_result FROM paymaster_usage AS usage
      WHERE $6::boolean
        AND usage.chain_id = $2::integer
        AND usage.entry_point = $7::text
        AND usage.request_fingerprint = $8::text
        AND usage.signed_result IS NOT NULL
      ORDER BY usage.seq LIMIT 1
    ) AS signed_result,
    (SELECT coalesce(json_agg(json_build_object('id', policy.id, 'name', policy.name,
        'chainIds', policy.chain_ids, 'allowlist', policy.allowlist, 'startsAt', policy.starts_at,
        'endsAt', policy.ends_at, 'budgets', policy.budgets, 'approvalWebhook', policy.approval_webhook)
        ORDER BY policy.position), '[]'::json)
      FROM paymaster_policies AS policy WHERE policy.client_id = $9::uuid
    ) AS policies,
    limits.merchant_id IS NOT NULL AS has_limits,
    ${MERCHANT_LIMIT_COLUMNS.map((column) => `limits.${column}`).join(', ')}
  FROM (SELECT 1) AS one
  LEFT JOIN paymaster_merchant_limits AS limits ON limits.merchant_id = $1::uuid`,
);

export async function readPaymasterDecisionInputs(
  db: Db,
  {
    merchantId,
    clientId,
    chainId,
    senders,
    denyTargets,
    allowlistTargets,
    signedRequest,
  }: {
    merchantId: string;
    /** The client's row id, whose policies are read. */
    clientId: string;
    chainId: number;
    /** Lower-case addresses. */
    senders: string[];
    denyTargets: string[];
    allowlistTargets: string[];
    /** A signing request's fingerprint on its chain and entry point (lower-case); none for stub data. */
    signedRequest?: { entryPoint: string; requestFingerprint: string };
  },
): Promise<PaymasterDecisionReads> {
  const rows = await runPrepared(db, DECISION_READS, [
    merchantId,
    chainId,
    [...new Set(senders)],
    [...new Set(denyTargets)],
    [...new Set(allowlistTargets)],
    signedRequest !== undefined,
    signedRequest?.entryPoint.toLowerCase() ?? '',
    signedRequest?.requestFingerprint ?? '',
    clientId,
  ]);
  const row = rows[0]!;
  const stored = row.signed_result;
  return {
    denyRules: row.deny_rules,
    allowlisted: new Set(row.allowlisted),
    signedResult: stored ? storedResultInSignerOrder(stored) : undefined,
    merchantLimits: row.has_limits
      ? (Object.fromEntries(
          MERCHANT_LIMIT_COLUMNS.map((column) => [column, row[column]]),
        ) as MerchantLimitColumns)
      : null,
    policies: row.policies.map((policy) => ({
      ...policy,
      startsAt: policy.startsAt === null ? null : new Date(policy.startsAt),
      endsAt: policy.endsAt === null ? null : new Date(policy.endsAt),
    })),
  };
}
