import type { Address } from 'viem';
import type { SponsorshipPolicyRules } from '../../db/paymasterDecisionReads';
import { denial, type PaymasterDenial } from '../rpc/denials';
import { allowlistOutcome } from './merchantPolicies';

/**
 * First match wins (issue 43, docs/paymaster.md "Sponsorship policies (issue 43)"): a client's policies are tried in their order and the first
 * whose rules all pass sponsors the operation. A policy's static rules: its chains (null: every chain
 * of the client), its window (`startsAt` ≤ now < `endsAt`), its allowlist (null: the merchant's shared
 * one). Its budgets are the last rule: they are consumed with the client's limits, so this selection
 * answers the candidates in order (those whose static rules pass), and the limit step takes the first
 * whose budgets have room (paymaster/limits/policyBudgets.ts). A candidate without budgets always has
 * room: the ones after it are never tried. An approval webhook is asked only of the candidate that
 * would sponsor, right before signing (paymaster/rpc/approveSponsorship.ts).
 *
 * When none passes, the answer is the refusal of the first policy that covers the chain and is open
 * now (for the default policy: today's allowlist refusal, word for word); when no policy covers the
 * chain now, a refusal that says so. Order only decides which policy sponsors, never whether an
 * operation every policy refuses is sponsored.
 */

/** One policy's verdict on an operation. */
export type PolicyVerdict =
  | { kind: 'sponsors' }
  /** The policy does not apply: another chain, or outside its window (`why`, in words). */
  | { kind: 'not_applicable'; why: string }
  | { kind: 'refuses'; denial: PaymasterDenial };

export type PolicySelection =
  | {
      ok: true;
      /** The policies whose static rules pass, in order; never empty. */
      candidates: SponsorshipPolicyRules[];
    }
  | { ok: false; denial: PaymasterDenial };

export interface PolicyOperation {
  chainId: number;
  /** The targets an allowlist must hold (a delegated transfer's token only). */
  allowlistTargets: Address[];
  /** Of those targets, lower-case, the ones on the merchant's shared allowlist for the chain. */
  sharedAllowlisted: Set<string>;
  now: Date;
}

/** Whether one policy would sponsor the operation on its static rules (chains, window, allowlist), budgets aside. */
export function judgePolicy(policy: SponsorshipPolicyRules, operation: PolicyOperation): PolicyVerdict {
  const { chainId, now } = operation;
  if (policy.chainIds !== null && !policy.chainIds.includes(chainId))
    return { kind: 'not_applicable', why: `it covers chains ${policy.chainIds.join(', ')}, not ${chainId}` };
  if (policy.startsAt !== null && now.getTime() < policy.startsAt.getTime())
    return { kind: 'not_applicable', why: `its window opens at ${policy.startsAt.toISOString()}` };
  if (policy.endsAt !== null && now.getTime() >= policy.endsAt.getTime())
    return { kind: 'not_applicable', why: `its window closed at ${policy.endsAt.toISOString()}` };
  const allowed =
    policy.allowlist === null
      ? operation.sharedAllowlisted
      : new Set(
          policy.allowlist
            .filter((entry) => entry.chainId === chainId)
            .map((entry) => entry.contractAddress.toLowerCase()),
        );
  const allowlist = allowlistOutcome(allowed, { chainId, targets: operation.allowlistTargets });
  if (!allowlist.ok) return { kind: 'refuses', denial: allowlist.denial };
  return { kind: 'sponsors' };
}

/**
 * The policies in order whose static rules pass, up to and including the first without budgets; or
 * the refusal to answer when none passes.
 */
export function selectSponsorshipPolicy(
  policies: readonly SponsorshipPolicyRules[],
  operation: PolicyOperation,
): PolicySelection {
  let firstRefusal: PaymasterDenial | undefined;
  const candidates: SponsorshipPolicyRules[] = [];
  for (const policy of policies) {
    const verdict = judgePolicy(policy, operation);
    if (verdict.kind === 'sponsors') {
      candidates.push(policy);
      if (policy.budgets.length === 0) break;
    }
    if (verdict.kind === 'refuses') firstRefusal ??= verdict.denial;
  }
  if (candidates.length > 0) return { ok: true, candidates };
  return {
    ok: false,
    denial:
      firstRefusal ??
      denial(
        'paymaster_target_not_allowed',
        `no sponsorship policy of this client covers chain ${operation.chainId} now`,
        'no_policy_applies',
      ),
  };
}
