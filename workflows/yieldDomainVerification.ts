import { continueAsNew, ParentClosePolicy, proxyActivities, sleep, startChild } from '@temporalio/workflow';
import type { YieldDomainActivities } from '../activities/yieldDomains';
import { yieldDomainWatchWorkflowId } from './workflowIds';

/**
 * `yield-domain-<domainId>`, started when a domain is attached:
 *
 *   check the TXT record ─matches─▶ verified ─▶ starts the watch below, returns 'verified'
 *        └─ not yet ─▶ wait pollIntervalMs ─▶ check again … 7 days after attaching ─▶ failed
 *   (a domain removed meanwhile ends the workflow; a proof while another merchant's verified domain
 *   holds the hostname keeps waiting)
 *
 * `yield-domain-watch-<domainId>`, for as long as the domain is verified (security review II, finding 1):
 *
 *   every recheckIntervalMs: the record is there ─▶ fine │ missing ─▶ missing for lapseGraceMs ─▶ the
 *   domain fails (its site stops, the hostname is free for the next owner to prove)
 */

/** How long a domain may stay pending before its verification fails (docs/decisions.md "Security review II — accounts and domains"). */
export const DOMAIN_VERIFICATION_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
/** Defaults for workflows started without them (docs/decisions.md, security review II). */
export const DOMAIN_RECHECK_INTERVAL_MS = 6 * 60 * 60 * 1000;
export const DOMAIN_LAPSE_GRACE_MS = 72 * 60 * 60 * 1000;
/** Re-checks per run of the watch before it continues as new (keeps its history short). */
const RECHECKS_PER_RUN = 200;

const { checkDomainVerification, failDomainVerification, recheckVerifiedDomain, releaseLapsedDomain } =
  proxyActivities<YieldDomainActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  });

export interface DomainWatchInput {
  domainId: string;
  recheckIntervalMs: number;
  lapseGraceMs: number;
  /** When the record was first found missing (workflow time, ms), carried across runs. */
  missingSinceMs?: number;
}

export async function yieldDomainVerificationWorkflow({
  domainId,
  createdAt,
  pollIntervalMs,
  recheckIntervalMs = DOMAIN_RECHECK_INTERVAL_MS,
  lapseGraceMs = DOMAIN_LAPSE_GRACE_MS,
}: {
  domainId: string;
  createdAt: string;
  pollIntervalMs: number;
  recheckIntervalMs?: number;
  lapseGraceMs?: number;
}): Promise<'verified' | 'failed' | 'gone'> {
  const deadline = Date.parse(createdAt) + DOMAIN_VERIFICATION_WINDOW_MS;
  for (;;) {
    const check = await checkDomainVerification({ domainId });
    if (check === 'verified') {
      await startChild(yieldDomainWatchWorkflow, {
        workflowId: yieldDomainWatchWorkflowId(domainId),
        args: [{ domainId, recheckIntervalMs, lapseGraceMs }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      return 'verified';
    }
    if (check !== 'pending') return check;
    const left = deadline - Date.now();
    if (left <= 0) {
      await failDomainVerification({ domainId });
      return 'failed';
    }
    await sleep(Math.min(pollIntervalMs, left));
  }
}

export async function yieldDomainWatchWorkflow(input: DomainWatchInput): Promise<'released' | 'gone'> {
  let { missingSinceMs } = input;
  for (let recheck = 0; recheck < RECHECKS_PER_RUN; recheck++) {
    await sleep(input.recheckIntervalMs);
    const state = await recheckVerifiedDomain({ domainId: input.domainId });
    if (state === 'gone') return 'gone';
    if (state === 'present') {
      missingSinceMs = undefined;
      continue;
    }
    missingSinceMs ??= Date.now();
    if (Date.now() - missingSinceMs >= input.lapseGraceMs) {
      await releaseLapsedDomain({ domainId: input.domainId });
      return 'released';
    }
  }
  return continueAsNew<typeof yieldDomainWatchWorkflow>({ ...input, missingSinceMs });
}
