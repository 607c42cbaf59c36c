import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { deliverNowSignal, webhookDeliveryWorkflow } from '../workflows/webhookDelivery';
import { webhookDeliveryWorkflowId, webhookResendWorkflowId } from '../workflows/workflowIds';

/**
 * Starting delivery workflows (the client side; the worker side is workflows/webhookDelivery.ts).
 * One workflow per (event, endpoint) pair, id `webhook-<eventId>-<endpointId>`.
 */

export interface DeliveryTarget {
  eventId: string;
  endpointId: string;
  /** The webhook task queue of the deployment (TEMPORAL_TASK_QUEUE_PREFIX applied). */
  taskQueue: string;
}

/**
 * The first delivery of an event to an endpoint. Reusing the id is rejected, so a retried start (an
 * activity replayed after a crash) is harmless: an existing run, open or closed, counts as started.
 * `deliveryId` names its delivery record when the caller answers with it (a test event).
 */
export async function startWebhookDelivery(
  client: Client,
  { eventId, endpointId, taskQueue, deliveryId }: DeliveryTarget & { deliveryId?: string },
): Promise<'started' | 'already_started'> {
  try {
    await client.workflow.start(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(eventId, endpointId),
      taskQueue,
      args: [{ eventId, endpointId, ...(deliveryId && { deliveryId }) }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already_started';
    throw error;
  }
}

/**
 * A manual re-dispatch (retry-webhook), atomic in Temporal through signal-with-start: when the
 * pair's workflow is still running it gets `deliverNow`: waiting between retries, it makes its next
 * attempt at once; mid-attempt, it sends once more after that attempt even if it succeeded. Two runs
 * never deliver the same pair side by side. When the
 * earlier run has finished (delivered, failed or canceled), a new run starts under the same id
 * (ALLOW_DUPLICATE) with a fresh schedule of attempts and its own delivery record.
 */
export async function redispatchWebhookDelivery(
  client: Client,
  { eventId, endpointId, taskQueue }: DeliveryTarget,
): Promise<void> {
  await client.workflow.signalWithStart(webhookDeliveryWorkflow, {
    workflowId: webhookDeliveryWorkflowId(eventId, endpointId),
    taskQueue,
    args: [{ eventId, endpointId }],
    signal: deliverNowSignal,
    signalArgs: [],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/**
 * A resend (docs/decisions.md "Webhook delivery operations"): a new delivery of the same event to the endpoint, with its own record
 * (`deliveryId`, chosen by the caller so it can answer with it) and the full retry schedule, in a
 * workflow of its own. A retried start of the same resend is harmless (the id is rejected).
 */
export async function startWebhookResend(
  client: Client,
  {
    eventId,
    endpointId,
    taskQueue,
    deliveryId,
    resendOf,
  }: DeliveryTarget & { deliveryId: string; resendOf: string },
): Promise<void> {
  try {
    await client.workflow.start(webhookDeliveryWorkflow, {
      workflowId: webhookResendWorkflowId(eventId, endpointId, deliveryId),
      taskQueue,
      args: [{ eventId, endpointId, deliveryId, resendOf }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** The session events' delivery starter (activities/sessionEvents.ts), bound to `client` and the webhook queue. */
export function webhookDeliveryStarterFor(client: Client, taskQueue: string) {
  return (target: Omit<DeliveryTarget, 'taskQueue'>) =>
    startWebhookDelivery(client, { ...target, taskQueue });
}
