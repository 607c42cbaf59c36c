import type { Address } from 'viem';
import type { SponsorshipPolicyRules } from '../../db/paymasterDecisionReads';
import { trySponsorshipLimits } from '../../db/paymasterLimits';
import type { Logger } from '../../logging/logger';
import type { PendingConsumption } from '../limits/limits';
import {
  approvalDecision,
  askApproval,
  type ApprovalCall,
  type ApprovalDependencies,
} from '../policy/approvalWebhook';
import type { Db } from '../../db/client';
import { firstAttemptTaken } from './firstAttemptTaken';
import { answerDenial, type DeniedAnswer } from './sponsorshipAnswer';
import type { UsageFacts } from './usageRecords';

/**
 * The approval step of a signing request (docs/paymaster.md "Approval webhooks (issue 43)"), right before the
 * signer: the policy that would sponsor the operation now is found the way the recording will find it
 * (each candidate's limits and budgets tried and rolled back, in order: nothing is held while the
 * receiver thinks), and when it has an approval webhook, the webhook is asked. Only that policy is
 * asked; its refusal (or an error under `onError: "deny"`) answers, and no later policy is tried
 * (docs/decisions.md "Approval webhooks and the dry run (issue 43, items 2 and 3)"). On approval, the recording may take only
 * that policy or, when its budget filled meanwhile, a later candidate without an approval webhook: a
 * policy whose receiver was not asked never sponsors.
 */

export interface ApprovalGateDependencies {
  db: Db;
  logger: Logger;
  approvals?: ApprovalDependencies;
}

export type ApprovalGate = { ok: true; consumption: PendingConsumption | undefined } | DeniedAnswer;

export interface ApprovalOperation {
  clientId: string;
  chainId: number;
  sender: Address;
  calls: ApprovalCall[];
  /** The candidate policies in order (selectSponsorshipPolicy.ts), the limit step's attempts follow them. */
  candidates: readonly SponsorshipPolicyRules[];
  consumption: PendingConsumption | undefined;
}

export async function approveSponsorship(
  deps: ApprovalGateDependencies,
  operation: ApprovalOperation,
  facts: UsageFacts,
  estimatedUsd: string | null,
): Promise<ApprovalGate> {
  const { candidates, consumption } = operation;
  if (!candidates.some((policy) => policy.approvalWebhook !== null)) return { ok: true, consumption };

  // Which policy sponsors now: the limits and each candidate's budgets, tried and rolled back.
  let sponsoringId = candidates[0]!.id;
  if (consumption) {
    const tried = await firstAttemptTaken(consumption, (consumptions) =>
      trySponsorshipLimits(deps.db, consumptions, consumption.hold),
    );
    if (tried.deniedAt !== undefined) {
      facts.policyId = tried.attempt.policyId;
      return answerDenial(tried.attempt.denial(tried.deniedAt));
    }
    sponsoringId = tried.attempt.policyId ?? sponsoringId;
  }
  const sponsoring = candidates.find((policy) => policy.id === sponsoringId)!;
  facts.policyId = sponsoring.id;

  if (sponsoring.approvalWebhook) {
    if (!deps.approvals) throw new Error('approval webhooks are not wired into the paymaster RPC');
    const answer = await askApproval(deps.approvals, sponsoring.approvalWebhook, {
      clientId: operation.clientId,
      policyId: sponsoring.id,
      chainId: operation.chainId,
      sender: operation.sender,
      calls: operation.calls,
      estimatedUsd,
    });
    const decision = approvalDecision({ ...sponsoring, approvalWebhook: sponsoring.approvalWebhook }, answer);
    if (!decision.approved) return answerDenial(decision.denial);
    if (decision.onError !== undefined) {
      deps.logger.warn(
        { policyId: sponsoring.id, detail: decision.onError },
        'approval webhook failed; the policy allows on error',
      );
    }
  }
  return { ok: true, consumption: consumption && fromApprovedPolicy(consumption, candidates, sponsoring.id) };
}

/**
 * The attempts the recording may take once `policyId` is approved: its own, then those of the later
 * candidates up to the first with an approval webhook (whose receiver was not asked).
 */
function fromApprovedPolicy(
  consumption: PendingConsumption,
  candidates: readonly SponsorshipPolicyRules[],
  policyId: string,
): PendingConsumption {
  const start = consumption.attempts.findIndex((attempt) => attempt.policyId === policyId);
  if (start < 0) return consumption;
  const unasked = (attemptPolicyId: string | undefined) =>
    candidates.find((policy) => policy.id === attemptPolicyId)?.approvalWebhook != null;
  const later = consumption.attempts.slice(start + 1);
  const cut = later.findIndex((attempt) => unasked(attempt.policyId));
  return {
    ...consumption,
    attempts: [consumption.attempts[start]!, ...(cut < 0 ? later : later.slice(0, cut))],
  };
}
