import type { Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { findSessionsWithoutWorkflow, markWorkflowStarted } from '../db/sessions';
import { startSessionWorkflow } from '../workflowClient/sessions';

export interface SessionReconcilerDependencies {
  db: Db;
  temporal: Client;
  /** Task queue the session workflows run on. */
  sessionsTaskQueue: string;
}

const BATCH = 100;

export function createSessionReconcilerActivities({
  db,
  temporal,
  sessionsTaskQueue,
}: SessionReconcilerDependencies) {
  return {
    /** Starts the workflows a crash left unstarted (an already-running one just gets marked); returns how many. */
    async startMissingSessionWorkflows({ olderThanSec }: { olderThanSec: number }): Promise<number> {
      const orphans = await findSessionsWithoutWorkflow(db, { olderThanSec, limit: BATCH });
      for (const session of orphans) {
        await startSessionWorkflow(temporal, {
          sessionId: session.id,
          merchantId: session.merchant_id,
          sandboxMode: session.sandbox_mode,
          expiresAt: session.expires_at,
          taskQueue: sessionsTaskQueue,
        });
        await markWorkflowStarted(db, session.id);
      }
      return orphans.length;
    },
  };
}

export type SessionReconcilerActivities = ReturnType<typeof createSessionReconcilerActivities>;
