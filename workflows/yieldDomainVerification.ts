import { proxyActivities, sleep } from '@temporalio/workflow';
import type { YieldDomainActivities } from '../activities/yieldDomains';

/**
 * `yield-domain-<domainId>`, started when a domain is attached:
 *
 *   check the TXT record ─matches─▶ verified
 *        └─ not yet ─▶ wait pollIntervalMs ─▶ check again … 7 days after attaching ─▶ failed
 *   (a domain removed meanwhile ends the workflow)
 */

/** How long a domain may stay pending before its verification fails (DESIGN §7.5). */
export const DOMAIN_VERIFICATION_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

const { checkDomainVerification, failDomainVerification } = proxyActivities<YieldDomainActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export async function yieldDomainVerificationWorkflow({
  domainId,
  createdAt,
  pollIntervalMs,
}: {
  domainId: string;
  createdAt: string;
  pollIntervalMs: number;
}): Promise<'verified' | 'failed' | 'gone'> {
  const deadline = Date.parse(createdAt) + DOMAIN_VERIFICATION_WINDOW_MS;
  for (;;) {
    const check = await checkDomainVerification({ domainId });
    if (check !== 'pending') return check;
    const left = deadline - Date.now();
    if (left <= 0) {
      await failDomainVerification({ domainId });
      return 'failed';
    }
    await sleep(Math.min(pollIntervalMs, left));
  }
}
