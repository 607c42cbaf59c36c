import { proxyActivities } from '@temporalio/workflow';
import type { EngineBaselineActivities } from './activities';

/**
 * The webhook bench's engine-only baseline: a bare workflow that runs one activity, a plain signed POST
 * to the same receiver. No database, no retries: what Temporal itself costs per delivery on this server.
 */
const { postSigned } = proxyActivities<EngineBaselineActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

export async function engineBaselineWorkflow(input: { eventId: string; payload: string }): Promise<void> {
  await postSigned(input);
}
