import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { DepositDetected } from '../activities/sessions';
import {
  depositDetectedSignal,
  paymentSessionWorkflow,
  retryForwarderSignal,
  type PaymentSessionInput,
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

/** `session-<id>`'s start: its input, queue, search attributes, and no second run under its id. */
function sessionWorkflowStart(session: StartSessionWorkflowParameters) {
  return {
    workflowId: sessionWorkflowId(session.sessionId),
    taskQueue: session.taskQueue ?? TASK_QUEUES.sessions,
    args: [{ sessionId: session.sessionId, expiresAt: session.expiresAt.toISOString() }] as [
      PaymentSessionInput,
    ],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    typedSearchAttributes: [
      { key: MerchantId, value: session.merchantId },
      { key: SessionStatus, value: 'awaiting_payment' as string },
      { key: SandboxMode, value: session.sandboxMode },
    ],
  };
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
    await client.workflow.start(paymentSessionWorkflow, sessionWorkflowStart(session));
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already_started';
    throw error;
  }
}

/**
 * startSessionWorkflow with the covering deposit the chain monitor recorded while no workflow ran (its
 * signal found none): the signal comes with the start, so a workflow started after the session's expiry
 * sees the on-time payment before its expiry check. A running workflow just gets the signal; a closed one
 * counts as started (its late funds are retry-forwarder's).
 */
export async function startSessionWorkflowWithDeposit(
  client: Client,
  session: StartSessionWorkflowParameters,
  deposit: DepositDetected,
): Promise<'started' | 'already_started'> {
  try {
    await client.workflow.signalWithStart(paymentSessionWorkflow, {
      ...sessionWorkflowStart(session),
      signal: depositDetectedSignal,
      signalArgs: [deposit],
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

/** The chain monitor's deposit signaller (activities/chainMonitor.ts), bound to `client`. */
export function depositSignallerFor(client: Client) {
  return (sessionId: string, deposit: DepositDetected) => signalDepositDetected(client, sessionId, deposit);
}

/**
 * The session reconciler's starter (activities/sessionReconciler.ts), bound to `client` and the sessions
 * queue: with a covering deposit the start carries its signal (startSessionWorkflowWithDeposit).
 */
export function sessionStarterFor(client: Client, taskQueue: string) {
  return (session: Omit<StartSessionWorkflowParameters, 'taskQueue'>, coveringDeposit?: DepositDetected) =>
    coveringDeposit
      ? startSessionWorkflowWithDeposit(client, { ...session, taskQueue }, coveringDeposit)
      : startSessionWorkflow(client, { ...session, taskQueue });
}
