import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { DepositDetected } from '../activities/sessions';
import {
  depositDetectedSignal,
  paymentSessionWorkflow,
  retryForwarderSignal,
} from '../workflows/paymentSession';
import { MerchantId, SandboxMode, SessionStatus } from '../workflows/searchAttributes';
import { TASK_QUEUES } from '../workflows/taskQueues';
import { sessionWorkflowId } from '../workflows/workflowIds';

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
export async function startSessionWorkflow(
  client: Client,
  session: StartSessionWorkflowParameters,
): Promise<'started' | 'already_started'> {
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

/** A deposit the chain monitor saw, to its session's workflow; WorkflowNotFoundError when none runs. */
export async function signalDepositDetected(
  client: Client,
  sessionId: string,
  deposit: DepositDetected,
): Promise<void> {
  await client.workflow.getHandle(sessionWorkflowId(sessionId)).signal(depositDetectedSignal, deposit);
}

export type RetryForwarderOutcome = 'signalled' | 'started' | 'busy';

/**
 * retry-forwarder: a failed session's running workflow gets the retry signal; a session whose workflow
 * has ended (expired or completed, with funds that arrived late) gets a new run that settles `deposit`.
 * A workflow still running in another state is busy (nothing to retry yet).
 */
export async function retryForwarder(
  client: Client,
  session: StartSessionWorkflowParameters & { failed: boolean; deposit?: DepositDetected },
): Promise<RetryForwarderOutcome> {
  const handle = client.workflow.getHandle(sessionWorkflowId(session.sessionId));
  const running = await handle
    .describe()
    .then((description) => description.status.name === 'RUNNING')
    .catch(() => false);
  if (running) {
    if (!session.failed) return 'busy';
    await handle.signal(retryForwarderSignal);
    return 'signalled';
  }
  if (!session.deposit) return 'busy';
  await client.workflow.start(paymentSessionWorkflow, {
    workflowId: sessionWorkflowId(session.sessionId),
    taskQueue: session.taskQueue ?? TASK_QUEUES.sessions,
    args: [
      {
        sessionId: session.sessionId,
        expiresAt: session.expiresAt.toISOString(),
        settleDeposit: session.deposit,
      },
    ],
    // The earlier run has closed; this one settles the funds it left behind.
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    typedSearchAttributes: [
      { key: MerchantId, value: session.merchantId },
      { key: SessionStatus, value: 'confirming' },
      { key: SandboxMode, value: session.sandboxMode },
    ],
  });
  return 'started';
}
