import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { ChargeSchedule } from '../subscriptions/chargeSchedule';
import { cancelSubscriptionSignal, subscriptionWorkflow } from '../workflows/subscription';
import { MerchantId } from '../workflows/searchAttributes';
import { TASK_QUEUES } from '../workflows/taskQueues';
import { subscriptionWorkflowId } from '../workflows/workflowIds';

export interface StartSubscriptionWorkflowParameters {
  subscriptionId: string;
  merchantId: string;
  schedule: ChargeSchedule;
  createdEventId: string;
  /** The sessions queue: the charging activities create and start period sessions there. */
  taskQueue?: string;
}

/**
 * Starts `subscription-<id>` at its first period. Reusing the id is rejected, so a subscribe request sent
 * again (the same signed delegation) starts nothing new: an existing run counts as started.
 */
export async function startSubscriptionWorkflow(
  client: Client,
  subscription: StartSubscriptionWorkflowParameters,
): Promise<'started' | 'already_started'> {
  try {
    await client.workflow.start(subscriptionWorkflow, {
      workflowId: subscriptionWorkflowId(subscription.subscriptionId),
      taskQueue: subscription.taskQueue ?? TASK_QUEUES.sessions,
      args: [
        {
          subscriptionId: subscription.subscriptionId,
          schedule: subscription.schedule,
          periodIndex: 0,
          createdEventId: subscription.createdEventId,
        },
      ],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [{ key: MerchantId, value: subscription.merchantId }],
    });
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already_started';
    throw error;
  }
}

/**
 * Tells the subscription's workflow it was canceled (at once: it wakes and ends; at period end: it charges
 * no further period). The cancelation is already stored: a workflow that is gone, or a signal that is
 * lost, changes nothing (the workflow reads the database before every period).
 */
export async function signalSubscriptionCanceled(
  client: Client,
  subscriptionId: string,
  { atPeriodEnd }: { atPeriodEnd: boolean },
): Promise<'signalled' | 'not_running'> {
  try {
    await client.workflow
      .getHandle(subscriptionWorkflowId(subscriptionId))
      .signal(cancelSubscriptionSignal, { atPeriodEnd });
    return 'signalled';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'not_running';
    throw error;
  }
}
