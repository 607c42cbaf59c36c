import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import type { loginNonceCleanupWorkflow } from '../workflows/loginNonceCleanup';
import { TASK_QUEUES } from './taskQueues';

/**
 * Housekeeping schedules the code owns. `ensureMaintenanceSchedules` is run at start-up (dev stack,
 * deployments): it creates missing schedules and brings existing ones back to the definition here,
 * keeping whatever an operator set on their state (paused, note).
 */

export const LOGIN_NONCE_CLEANUP_SCHEDULE_ID = 'login-nonce-cleanup';

/** Expired login nonces are kept this long before the hourly sweep deletes them. */
export const LOGIN_NONCE_RETENTION_SEC = 60 * 60;

export interface EnsureMaintenanceSchedulesOptions {
  /** Task queue of the scheduled workflows; `TASK_QUEUES.maintenance` by default. */
  taskQueue?: string;
}

/** Creates or updates every maintenance schedule; returns their ids. */
export async function ensureMaintenanceSchedules(
  client: Client,
  { taskQueue = TASK_QUEUES.maintenance }: EnsureMaintenanceSchedulesOptions = {},
): Promise<string[]> {
  const action: ScheduleOptionsStartWorkflowAction<typeof loginNonceCleanupWorkflow> = {
    type: 'startWorkflow',
    workflowType: 'loginNonceCleanupWorkflow',
    args: [{ olderThanSec: LOGIN_NONCE_RETENTION_SEC }],
    taskQueue,
    workflowId: LOGIN_NONCE_CLEANUP_SCHEDULE_ID,
    workflowExecutionTimeout: '30 minutes',
  };
  const definition = {
    spec: { intervals: [{ every: '1 hour' }] },
    action,
    // A sweep that is late or missed is covered by the next one: never run two, never catch up.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
  try {
    await client.schedule.create({ scheduleId: LOGIN_NONCE_CLEANUP_SCHEDULE_ID, ...definition });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule
      .getHandle(LOGIN_NONCE_CLEANUP_SCHEDULE_ID)
      .update((previous) => ({ ...definition, state: previous.state }));
  }
  return [LOGIN_NONCE_CLEANUP_SCHEDULE_ID];
}
