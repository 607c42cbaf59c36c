import { proxyActivities } from '@temporalio/workflow';
import type { SessionReconcilerActivities } from '../activities/sessionReconciler';

const { startMissingSessionWorkflows } = proxyActivities<SessionReconcilerActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 5,
  },
});

/**
 * Run every minute by the `session-reconciler` schedule: starts the workflow of any session whose
 * creation committed but whose workflow start was lost (API crash or Temporal outage in between).
 */
export async function sessionReconcilerWorkflow({
  olderThanSec,
}: {
  olderThanSec: number;
}): Promise<{ started: number }> {
  return { started: await startMissingSessionWorkflows({ olderThanSec }) };
}
