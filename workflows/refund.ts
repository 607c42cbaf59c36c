import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { RefundActivities, RefundStep } from '../activities/refunds';
import type { SessionEventActivities } from '../activities/sessionEvents';

/**
 * One workflow per refund (`refund-<uuid>`), durable across restarts and visible in the Temporal UI:
 *
 *   awaiting_address / awaiting_authorization / awaiting_payment ──refundChanged──▶ look again
 *   processing, with its transaction ──transfer confirmed (the chain's confirmations)──▶ succeeded (refund.succeeded)
 *              └─receipt now reverted or not that transfer──▶ failed (refund.failed)
 *   canceled ──▶ ends
 *
 * The API stores every change (address given, transaction reported and verified, canceled) and then
 * signals `refundChanged` (signal-with-start, so a refund whose start was lost gets its workflow then);
 * the workflow holds no state of its own but where it is, and reads the row through its activity.
 */
const { advanceRefund } = proxyActivities<RefundActivities>({
  // A row read, a receipt read, and for a forwarder refund a forwarder deploy and the relay: RPC hiccups and
  // database restarts are retried; a relay is recorded before it is broadcast, so a retry never sends twice.
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const { startWebhookDeliveries } = proxyActivities<SessionEventActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const refundChangedSignal = defineSignal('refundChanged');
export const refundStepQuery = defineQuery<RefundStep | undefined>('refundStep');

/** How often a processing refund looks for its confirmations (block times are seconds). */
export const REFUND_CONFIRMATION_POLL_MS = 5_000;

const FINAL = new Set(['succeeded', 'failed', 'canceled']);
/** Looks per run before the workflow continues as new: a refund polled for a long time keeps a short history. */
const STEPS_PER_RUN = 200;

export async function refundWorkflow({
  refundId,
  confirmationPollMs = REFUND_CONFIRMATION_POLL_MS,
}: {
  refundId: string;
  confirmationPollMs?: number;
}): Promise<RefundStep> {
  let changed = false;
  let step: RefundStep | undefined;
  setHandler(refundChangedSignal, () => {
    changed = true;
  });
  setHandler(refundStepQuery, () => step);
  for (let looks = 0; looks < STEPS_PER_RUN; looks += 1) {
    // Cleared before the read: a change stored while the activity runs wakes the next wait.
    changed = false;
    step = await advanceRefund({ refundId });
    if (step.eventId) await startWebhookDeliveries({ eventId: step.eventId });
    if (FINAL.has(step.status)) return step;
    // Confirmations come with blocks; everything else (an address, a payment, an authorization, a relayed
    // forwarder refund) comes with a change the API stores and signals.
    if (step.awaitingConfirmations) await condition(() => changed, confirmationPollMs);
    else await condition(() => changed);
  }
  return continueAsNew<typeof refundWorkflow>({ refundId, confirmationPollMs });
}
