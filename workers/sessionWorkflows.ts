import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { paymentSessionWorkflow } from '../workflows/paymentSession';
import { MerchantId, SandboxMode, SessionStatus } from './searchAttributes';
import { TASK_QUEUES } from './taskQueues';

export const sessionWorkflowId = (sessionId: string) => `session-${sessionId}`;

export interface StartSessionWorkflowParameters {
  sessionId: string;
  merchantId: string;
  sandboxMode: boolean;
  expiresAt: Date;
  taskQueue?: string;
}

/**
 * Starts `session-<id>` with its search attributes. Reusing the id is rejected, so a retried start
 * (the API after a timeout, or the reconciler) is harmless: an existing run counts as started.
 */
export async function startSessionWorkflow(client: Client, session: StartSessionWorkflowParameters): Promise<'started' | 'already_started'> {
  try {
    await client.workflow.start(paymentSessionWorkflow, {
      workflowId: sessionWorkflowId(session.sessionId),
      taskQueue: session.taskQueue ?? TASK_QUEUES.sessions,
      args: [{ sessionId: session.sessionId, expiresAt: session.expiresAt.toISOString() }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: MerchantId, value: session.merchantId },
        { key: SessionStatus, value: 'awaiting_payment' },
        { key: SandboxMode, value: session.sandboxMode },
      ],
    });
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already_started';
    throw error;
  }
}
