import {
  ActivityFailure,
  condition,
  defineSignal,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  TimeoutFailure,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { AttemptReport, FirstAttempt, WebhookDeliveryActivities } from '../activities/webhookDelivery';
import {
  WEBHOOK_ATTEMPT_TIMEOUT_MS,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_RETRY_DELAYS_MS,
} from '../webhooks/deliveryPolicy';
import { webhookDeliveryWorkflowId } from './workflowIds';

/**
 * One workflow per (event, endpoint) pair, `webhook-<eventId>-<endpointId>` (docs/decisions.md "Webhooks"), and one per
 * resend (docs/decisions.md "Webhook delivery operations"):
 *
 *   attempt 1 ─fail─▶ 1 m ─▶ attempt 2 ─fail─▶ 5 m ─▶ 3 ─▶ 30 m ─▶ 4 ─▶ 2 h ─▶ 5 ─fail─▶ failed
 *        └──── any 2xx ─▶ succeeded (the session reads webhookDelivered: true)
 *        └──── endpoint disabled or deleted before an attempt ─▶ canceled
 *        └──── a failure ending 5 days of failures ─▶ endpoint disabled, `endpoint.disabled` announced
 *
 * The schedule in webhooks/deliveryPolicy.ts is the retry policy: the send activity itself is
 * never retried by Temporal, and every attempt is recorded.
 */
const { openDelivery, recordAttempt, finishDelivery, announceEndpointDisabled } =
  proxyActivities<WebhookDeliveryActivities>({
    // Small database writes; retried while the database is unreachable (each is idempotent).
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });

const { sendWebhookAttempt } = proxyActivities<WebhookDeliveryActivities>({
  // The attempt's budget; the HTTP request inside is aborted at the same bound.
  startToCloseTimeout: WEBHOOK_ATTEMPT_TIMEOUT_MS,
  retry: { maximumAttempts: 1 },
});

const { openAndAttemptFirst } = proxyActivities<WebhookDeliveryActivities>({
  // The attempt's budget plus the delivery record before it and the attempt record after it.
  startToCloseTimeout: WEBHOOK_ATTEMPT_TIMEOUT_MS + 30_000,
  retry: { maximumAttempts: 1 },
});

/** A manual re-dispatch reaching a running delivery: make the next attempt now instead of after the pause. */
export const deliverNowSignal = defineSignal('deliverNow');

export interface WebhookDeliveryInput {
  eventId: string;
  endpointId: string;
  /** A resend (docs/decisions.md "Webhook delivery operations"): the new delivery's id, chosen by the route that answers with it. */
  deliveryId?: string;
  /** A resend: the delivery it sends again. */
  resendOf?: string;
}

export interface WebhookDeliveryResult {
  status: 'succeeded' | 'failed' | 'canceled';
  attempts: number;
}

export async function webhookDeliveryWorkflow({
  eventId,
  endpointId,
  deliveryId,
  resendOf,
}: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const record = { eventId, endpointId, deliveryId, resendOf };
  // Re-dispatches asked for so far, and how many of them the latest attempt already answers.
  let redispatchesRequested = 0;
  let redispatchesAnswered = 0;
  setHandler(deliverNowSignal, () => {
    redispatchesRequested += 1;
  });

  const { workflowId, runId } = workflowInfo();
  // Attempt 1 with its delivery record and attempt record in one activity (one task instead of three);
  // when that activity fails, the step-by-step path below makes attempt 1 itself.
  let first: FirstAttempt | undefined;
  if (patched('webhook-first-attempt-in-one-activity')) {
    redispatchesAnswered = redispatchesRequested;
    try {
      // The attempt is dated by workflow time, like every later one: runs of failures compare them.
      first = await openAndAttemptFirst({
        ...record,
        workflowId,
        workflowRunId: runId,
        attemptedAt: new Date(Date.now()).toISOString(),
      });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      log.warn('first webhook attempt activity failed', {
        eventId,
        endpointId,
        error: error.cause?.message || error.message,
      });
    }
    if (first?.kind === 'endpoint_gone') return { status: 'canceled', attempts: 0 };
  }
  const delivery =
    first?.kind === 'attempted'
      ? { deliveryId: first.deliveryId }
      : await openDelivery({ ...record, workflowId, workflowRunId: runId });
  if (!delivery) return { status: 'canceled', attempts: 0 };

  let delivered = false;
  let attempt = 0;
  while (attempt < WEBHOOK_MAX_ATTEMPTS) {
    attempt += 1;
    const made = attempt === 1 && first?.kind === 'attempted' ? first : undefined;
    if (!made) redispatchesAnswered = redispatchesRequested;
    const attemptedAt = made ? made.attemptedAt : new Date(Date.now()).toISOString();
    const report = made ? made.report : await attemptOnce({ eventId, endpointId });
    if (report.kind === 'endpoint_unavailable') {
      await finishDelivery({ deliveryId: delivery.deliveryId, status: 'canceled' });
      return { status: delivered ? 'succeeded' : 'canceled', attempts: attempt - 1 };
    }

    const succeeded = report.result.outcome === 'succeeded';
    delivered ||= succeeded;
    const redispatchPending = () => redispatchesRequested > redispatchesAnswered;
    const pauseMs = succeeded ? undefined : WEBHOOK_RETRY_DELAYS_MS[attempt - 1];
    const recorded = made?.recorded
      ? made
      : await recordAttempt({
          deliveryId: delivery.deliveryId,
          attemptNumber: attempt,
          attemptedAt,
          ...report.result,
          nextAttemptAt: pauseMs === undefined ? null : new Date(Date.now() + pauseMs).toISOString(),
        });
    // This failure ended 5 days of failures and disabled the endpoint (docs/operations.md "A webhook endpoint disabled for failing"): say so; the next
    // attempt then finds the endpoint disabled and the delivery ends canceled.
    if (recorded.disabledEventId && patched('announce-disabled-endpoint'))
      await announceDisabledEndpoint(recorded.disabledEventId);
    // A re-dispatch that arrived while this attempt was under way still gets a send of its own.
    if (succeeded && !redispatchPending()) return { status: 'succeeded', attempts: attempt };
    if (succeeded) continue;
    if (pauseMs === undefined) break;
    await condition(redispatchPending, pauseMs);
  }

  if (delivered) return { status: 'succeeded', attempts: attempt };
  await finishDelivery({ deliveryId: delivery.deliveryId, status: 'failed' });
  return { status: 'failed', attempts: attempt };
}

/**
 * The `endpoint.disabled` event goes to the merchant's other endpoints that list it, each a delivery
 * workflow of its own (a child left running when this one ends; a replayed start is harmless), and
 * the merchant is mailed.
 */
async function announceDisabledEndpoint(eventId: string): Promise<void> {
  const { endpointIds } = await announceEndpointDisabled({ eventId });
  for (const endpointId of endpointIds) {
    try {
      await startChild(webhookDeliveryWorkflow, {
        workflowId: webhookDeliveryWorkflowId(eventId, endpointId),
        args: [{ eventId, endpointId }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}

/** One send; an activity that timed out or broke counts as a failed attempt, never as a failed workflow. */
async function attemptOnce(target: WebhookDeliveryInput): Promise<AttemptReport> {
  try {
    return await sendWebhookAttempt(target);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    const timedOut = error.cause instanceof TimeoutFailure;
    log.warn('webhook attempt activity failed', { ...target, error: error.cause?.message || error.message });
    return {
      kind: 'sent',
      result: {
        outcome: timedOut ? 'timeout' : 'network_error',
        statusCode: null,
        latencyMs: timedOut ? WEBHOOK_ATTEMPT_TIMEOUT_MS : 0,
        responseBody: null,
        error: timedOut
          ? `no complete answer within ${WEBHOOK_ATTEMPT_TIMEOUT_MS} ms`
          : 'the attempt could not be completed',
      },
    };
  }
}
