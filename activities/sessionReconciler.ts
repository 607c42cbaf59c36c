import type { Db } from '../db/client';
import { findCoveringAcceptedDeposit } from '../db/deposits';
import { findSessionsWithoutWorkflow, markWorkflowStarted, type SessionRow } from '../db/sessions';
import type { DepositDetected } from './sessions';

export interface SessionReconcilerDependencies {
  db: Db;
  /** Starts a session's workflow on the sessions queue (workflowClient/sessions.ts, bound by the worker). */
  startSessionWorkflow: SessionWorkflowStarter;
}

/**
 * Starts `session-<id>`, with the covering deposit's signal when one is given; an existing run counts as
 * started.
 */
export type SessionWorkflowStarter = (
  session: { sessionId: string; merchantId: string; sandboxMode: boolean; expiresAt: Date },
  coveringDeposit?: DepositDetected,
) => Promise<unknown>;

const BATCH = 100;

/**
 * Starts the workflow of one session whose start was lost (an already-running one just gets marked). A
 * payment the chain monitor recorded meanwhile had its signal dropped (no workflow ran): it comes with the
 * start, so an on-time payment is never taken for an expiry, however late the start.
 */
export async function startOrphanSessionWorkflow(
  { db, startSessionWorkflow }: SessionReconcilerDependencies,
  session: Pick<SessionRow, 'id' | 'merchant_id' | 'sandbox_mode' | 'expires_at'>,
): Promise<void> {
  const start = {
    sessionId: session.id,
    merchantId: session.merchant_id,
    sandboxMode: session.sandbox_mode,
    expiresAt: session.expires_at,
  };
  const deposit = await findCoveringAcceptedDeposit(db, session.id);
  await startSessionWorkflow(start, deposit);
  await markWorkflowStarted(db, session.id);
}

export function createSessionReconcilerActivities(dependencies: SessionReconcilerDependencies) {
  return {
    /** Starts the workflows a crash left unstarted (an already-running one just gets marked); returns how many. */
    async startMissingSessionWorkflows({ olderThanSec }: { olderThanSec: number }): Promise<number> {
      const orphans = await findSessionsWithoutWorkflow(dependencies.db, { olderThanSec, limit: BATCH });
      for (const session of orphans) await startOrphanSessionWorkflow(dependencies, session);
      return orphans.length;
    },
  };
}

export type SessionReconcilerActivities = ReturnType<typeof createSessionReconcilerActivities>;
