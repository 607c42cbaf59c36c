import type { Db } from '../../db/client';
import { markWorkflowsStarted } from '../../db/sessions';

/**
 * Records sessions whose workflow started (`workflow_started_at`), as a group commit: with no update in
 * flight a mark is written at once, alone; marks that arrive while one is in flight are written together
 * by the next single UPDATE. Under load that is one round trip for many sessions, and at rest it adds no
 * wait. Each caller's promise settles when its own row is written (or the statement failed).
 */
export function workflowStartMarks(db: Db): (sessionId: string) => Promise<void> {
  let waiting: { ids: string[]; settle: ((error?: unknown) => void)[] } | undefined;
  let writing = false;
  const write = async () => {
    writing = true;
    while (waiting) {
      const batch = waiting;
      waiting = undefined;
      let failure: unknown;
      try {
        await markWorkflowsStarted(db, batch.ids);
      } catch (error) {
        failure = error ?? new Error('marking started workflows failed');
      }
      for (const settle of batch.settle) settle(failure);
    }
    writing = false;
  };
  return (sessionId) =>
    new Promise<void>((resolve, reject) => {
      waiting ??= { ids: [], settle: [] };
      waiting.ids.push(sessionId);
      waiting.settle.push((error) => (error === undefined ? resolve() : reject(error)));
      if (!writing) void write();
    });
}
