import { readPaymasterDecisionInputs, type SponsorshipPolicyRules } from '../../db/paymasterDecisionReads';
import type { ChainClocks } from '../../chain/chainClock';
import type { SponsorshipLimits } from '../limits/limits';
import { checkPrepaidBalance, type PaymasterClient } from '../policy/clientChecks';
import {
  checkDelegationSignature,
  checkOperationCalls,
  readOperationCalls,
  type DelegationSignatureDependencies,
  type OperationCallsDependencies,
} from '../policy/operationCalls';
import { judgePolicy } from '../policy/selectSponsorshipPolicy';
import type { Db } from '../../db/client';
import { describeDenial, POLICY_DENIED_PREFIX } from './denials';
import { readSponsorshipRequest } from './readSponsorshipRequest';
import type { DeniedAnswer } from './sponsorshipAnswer';
import { NO_USAGE_FACTS } from './usageRecords';

/**
 * The dry run (issue 43, item 3; `pm_validateSponsorshipPolicies` and the dashboard's check): which of
 * the client's policies would sponsor an operation now, and why each other one would not. Every rule of
 * a signing request runs — the request's shape, chain and gas mode, deny rules, decoding and batch rules,
 * a delegated transfer's signature, the prepaid balance, each policy's chains, window and allowlist, the
 * client's limits and each policy's budgets as they stand (used plus live holds, by the chain's time) —
 * and nothing is consumed, held or recorded. The approval webhook is not asked: a policy with one is
 * listed when its rules pass, its receiver deciding when the operation is signed (docs/decisions.md
 * "Approval webhooks and the dry run (issue 43, items 2 and 3)").
 * Unlike signing, every policy is judged, not only the first that passes.
 */

export interface DryRunDependencies extends OperationCallsDependencies, DelegationSignatureDependencies {
  db: Db;
  chainClocks?: ChainClocks;
  limits?: SponsorshipLimits;
}

export interface PolicyDryRunVerdict {
  policyId: string;
  name: string;
  sponsors: boolean;
  /** Why not, in the words of the denial signing would answer; null when it sponsors. */
  reason: string | null;
  /** The policy asks its approval webhook before signing (not asked by a dry run). */
  asksApproval: boolean;
}

export type DryRunOutcome =
  | {
      ok: true;
      /** What refuses the operation whichever policy (deny rules, the chain, a client limit…); null: none. */
      refusal: string | null;
      /** The client's policies (or those asked for), in their order. */
      policies: PolicyDryRunVerdict[];
    }
  /** The request is malformed: the JSON-RPC error signing would answer (-32602 …). */
  | DeniedAnswer;

export async function dryRunPolicies(
  deps: DryRunDependencies,
  client: PaymasterClient,
  { params, policyIds }: { params: unknown[]; policyIds?: readonly string[] },
): Promise<DryRunOutcome> {
  const facts = { ...NO_USAGE_FACTS };
  // Read as stub data is (no gas fields needed; no token: sponsored), the request's shape checks first.
  const read = readSponsorshipRequest(
    client,
    { method: 'pm_getPaymasterStubData', params: params.slice(0, 3) },
    facts,
  );
  if (!read.ok && !read.denial.error.message.startsWith(POLICY_DENIED_PREFIX)) return read;

  const now = deps.now();
  const allPolicies = await policiesOf(deps.db, client.id);
  const asked = policyIds ? allPolicies.filter((policy) => policyIds.includes(policy.id)) : allPolicies;
  const refuseAll = (refusal: string): DryRunOutcome => ({
    ok: true,
    refusal,
    policies: asked.map((policy) => verdict(policy, refusal)),
  });
  if (!read.ok) return refuseAll(withoutPrefix(read.denial.error.message));

  const sponsorship = read.request;
  const { chainId, userOp } = sponsorship;
  const calls = readOperationCalls(deps, sponsorship);
  const reads = await readPaymasterDecisionInputs(deps.db, {
    merchantId: client.merchantId,
    clientId: client.id,
    chainId,
    senders: [userOp.sender.toLowerCase(), ...(calls.transfer ? [calls.transfer.owner.toLowerCase()] : [])],
    denyTargets: calls.targets.map((target) => target.toLowerCase()),
    allowlistTargets: calls.decoded.ok ? calls.allowlistTargets.map((target) => target.toLowerCase()) : [],
  });
  const refusedCalls = checkOperationCalls(calls, reads, sponsorship);
  if (refusedCalls) return refuseAll(withoutPrefix(refusedCalls.denial.error.message));
  if (calls.transfer) {
    const signature = await checkDelegationSignature(deps, chainId, calls.transfer, calls.delegationManager);
    if (signature) return refuseAll(withoutPrefix(signature.denial.error.message));
  }
  const balance = await checkPrepaidBalance(deps.db, {
    merchantId: client.merchantId,
    chainId,
    mode: sponsorship.mode,
  });
  if (!balance.ok) return refuseAll(describeDenial(balance.denial));

  // Each policy's static rules; those that pass have their budgets read.
  const reasons = new Map<string, string>();
  const passing: SponsorshipPolicyRules[] = [];
  for (const policy of asked) {
    const judged = judgePolicy(policy, {
      chainId,
      allowlistTargets: calls.allowlistTargets,
      sharedAllowlisted: reads.allowlisted,
      now,
    });
    if (judged.kind === 'sponsors') passing.push(policy);
    else
      reasons.set(
        policy.id,
        judged.kind === 'refuses'
          ? describeDenial(judged.denial)
          : `the policy does not apply: ${judged.why}`,
      );
  }
  const budgeted = passing.filter((policy) => policy.budgets.length > 0);
  const chainTime = budgeted.length > 0 ? await deps.chainClocks?.latest(chainId) : undefined;
  const readable = chainTime ? passing : passing.filter((policy) => policy.budgets.length === 0);
  for (const policy of passing.filter((item) => !readable.includes(item)))
    reasons.set(
      policy.id,
      `chain ${chainId} could not be read for the time the policy counts its budgets by`,
    );

  if (!deps.limits) throw new Error('sponsorship limits are not wired into the paymaster RPC');
  const room = await deps.limits.room({
    merchantId: client.merchantId,
    clientId: client.clientId,
    chainId,
    sender: userOp.sender.toLowerCase(),
    ...(calls.transfer && { delegatedOwner: calls.transfer.owner.toLowerCase() }),
    mode: sponsorship.mode,
    merchantLimits: reads.merchantLimits,
    policies: readable,
    ...(chainTime && { chainTime }),
  });
  if (room.limit) return refuseAll(describeDenial(room.limit));
  readable.forEach((policy, index) => {
    const budget = room.budgets[index];
    if (budget) reasons.set(policy.id, describeDenial(budget));
  });
  return {
    ok: true,
    refusal: null,
    policies: asked.map((policy) => verdict(policy, reasons.get(policy.id) ?? null)),
  };
}

function verdict(policy: SponsorshipPolicyRules, reason: string | null): PolicyDryRunVerdict {
  return {
    policyId: policy.id,
    name: policy.name,
    sponsors: reason === null,
    reason,
    asksApproval: policy.approvalWebhook !== null,
  };
}

const withoutPrefix = (message: string) =>
  message.startsWith(POLICY_DENIED_PREFIX) ? message.slice(POLICY_DENIED_PREFIX.length) : message;

/** The client's policies in order, as the decision reads them. */
async function policiesOf(db: Db, clientId: string): Promise<SponsorshipPolicyRules[]> {
  const rows = await db
    .selectFrom('paymaster_policies')
    .select(['id', 'name', 'chain_ids', 'allowlist', 'starts_at', 'ends_at', 'budgets', 'approval_webhook'])
    .where('client_id', '=', clientId)
    .orderBy('position')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    chainIds: row.chain_ids,
    allowlist: row.allowlist,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    budgets: row.budgets,
    approvalWebhook: row.approval_webhook,
  }));
}
