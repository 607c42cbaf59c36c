import { signalRefundChanged } from '../../workflowClient/refunds';
import { withTemporalDeadline } from '../../workflowClient/connection';
import type { AppContext } from '../appContext';

/**
 * After a refund's row changed and committed: wake (or start) its workflow, bounded like a session start.
 * A failure is logged, not answered: the row is the truth, and the next change signals again.
 */
export async function wakeRefundWorkflow(
  app: AppContext,
  { refundId, merchantId }: { refundId: string; merchantId: string },
): Promise<void> {
  try {
    await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
      signalRefundChanged(app.temporal, { refundId, merchantId, taskQueue: app.taskQueues.sessions }),
    );
  } catch (error) {
    app.logger.warn({ err: error, refundId }, 'refund workflow not signalled; the next change signals again');
  }
}
