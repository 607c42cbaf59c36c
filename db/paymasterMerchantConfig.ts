import type { Db } from './client';
import type { DenyRuleKind } from './paymasterPolicies';
import { MERCHANT_LIMIT_COLUMNS, type MerchantLimitColumns } from './paymasterLimits';
import type { SponsorshipPolicyRules } from './paymasterDecisionReads';
import { preparedStatement, runPrepared } from './preparedStatements';

/**
 * A merchant's whole paymaster configuration, as the RPC's decision reads need it (issue 46): its deny
 * rules and shared allowlist on every chain, its own limits, and every client's sponsorship policies in
 * their order. Read once per merchant and kept in a per-process cache that the triggers of migration
 * 2026_11_29_0900 invalidate (paymaster/policy/merchantConfigCache.ts), so a signed answer no longer
 * reads them from Postgres.
 */
export interface MerchantPaymasterConfig {
  /** Per chain: `<kind>:<address>` of every deny rule (lower-case addresses). */
  denyRules: Map<number, Set<string>>;
  /** Per chain: the allowlisted contracts (lower-case). */
  allowlist: Map<number, Set<string>>;
  /** Null when the merchant set no limits of its own. */
  merchantLimits: MerchantLimitColumns | null;
  /** Per client of the merchant (row id): its policies in their order, none for a client without. */
  policiesByClient: Map<string, SponsorshipPolicyRules[]>;
}

/** The channel the triggers announce a changed merchant on (payload: the merchant id). */
export const PAYMASTER_CONFIG_CHANGES_CHANNEL = 'paymaster_config_changes';

type StoredPolicy = Omit<SponsorshipPolicyRules, 'startsAt' | 'endsAt'> & {
  clientId: string;
  startsAt: string | null;
  endsAt: string | null;
};

type MerchantConfigRow = {
  deny_rules: { chainId: number; kind: DenyRuleKind; address: string }[];
  allowlist: { chainId: number; address: string }[];
  policies: StoredPolicy[];
  client_ids: string[];
  has_limits: boolean;
} & MerchantLimitColumns;

/** Prepared (db/preparedStatements.ts); runs once per merchant per invalidation. Parameter: the merchant. */
const MERCHANT_CONFIG = preparedStatement<MerchantConfigRow, [string]>(
  'paymaster_merchant_config_v1',
  `SELECT
    (SELECT coalesce(json_agg(json_build_object('chainId', rule.chain_id, 'kind', rule.kind,
        'address', rule.address)), '[]'::json)
      FROM paymaster_deny_rules AS rule WHERE rule.merchant_id = $1::uuid) AS deny_rules,
    (SELECT coalesce(json_agg(json_build_object('chainId', entry.chain_id,
        'address', entry.contract_address)), '[]'::json)
      FROM paymaster_allowlist_entries AS entry WHERE entry.merchant_id = $1::uuid) AS allowlist,
    (SELECT coalesce(json_agg(json_build_object('clientId', policy.client_id, 'id', policy.id,
        'name', policy.name, 'chainIds', policy.chain_ids, 'allowlist', policy.allowlist,
        'startsAt', policy.starts_at, 'endsAt', policy.ends_at, 'budgets', policy.budgets,
        'approvalWebhook', policy.approval_webhook) ORDER BY policy.client_id, policy.position), '[]'::json)
      FROM paymaster_policies AS policy WHERE policy.merchant_id = $1::uuid) AS policies,
    ARRAY(SELECT client.id::text FROM paymaster_clients AS client WHERE client.merchant_id = $1::uuid)
      AS client_ids,
    limits.merchant_id IS NOT NULL AS has_limits,
    ${MERCHANT_LIMIT_COLUMNS.map((column) => `limits.${column}`).join(', ')}
  FROM (SELECT 1) AS one
  LEFT JOIN paymaster_merchant_limits AS limits ON limits.merchant_id = $1::uuid`,
);

export async function readMerchantPaymasterConfig(
  db: Db,
  merchantId: string,
): Promise<MerchantPaymasterConfig> {
  const row = (await runPrepared(db, MERCHANT_CONFIG, [merchantId]))[0]!;
  const byChain = (entries: { chainId: number; key: string }[]) => {
    const map = new Map<number, Set<string>>();
    for (const { chainId, key } of entries) {
      const keys = map.get(chainId) ?? new Set<string>();
      keys.add(key);
      map.set(chainId, keys);
    }
    return map;
  };
  // Every client of the merchant, those without policies (which sponsor nothing) included.
  const policiesByClient = new Map<string, SponsorshipPolicyRules[]>(
    row.client_ids.map((clientId) => [clientId, []]),
  );
  for (const { clientId, ...policy } of row.policies) {
    const policies = policiesByClient.get(clientId) ?? [];
    policies.push({
      ...policy,
      startsAt: policy.startsAt === null ? null : new Date(policy.startsAt),
      endsAt: policy.endsAt === null ? null : new Date(policy.endsAt),
    });
    policiesByClient.set(clientId, policies);
  }
  return {
    denyRules: byChain(
      row.deny_rules.map((rule) => ({ chainId: rule.chainId, key: `${rule.kind}:${rule.address}` })),
    ),
    allowlist: byChain(row.allowlist.map((entry) => ({ chainId: entry.chainId, key: entry.address }))),
    merchantLimits: row.has_limits
      ? (Object.fromEntries(
          MERCHANT_LIMIT_COLUMNS.map((column) => [column, row[column]]),
        ) as MerchantLimitColumns)
      : null,
    policiesByClient,
  };
}
