import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsStartWorkflowAction,
  type Workflow,
} from '@temporalio/client';
import type { loginNonceCleanupWorkflow } from '../workflows/loginNonceCleanup';
import type { sessionReconcilerWorkflow } from '../workflows/sessionReconciler';
import { TASK_QUEUES } from './taskQueues';

/**
 * Housekeeping schedules the code owns. `ensureMaintenanceSchedules` is run at start-up (dev stack,
 * deployments): it creates missing schedules and brings existing ones back to the definition here,
 * keeping whatever an operator set on their state (paused, note).
 */

export const LOGIN_NONCE_CLEANUP_SCHEDULE_ID = 'login-nonce-cleanup';
export const SESSION_RECONCILER_SCHEDULE_ID = 'session-reconciler';

/** Expired login nonces are kept this long before the hourly sweep deletes them. */
export const LOGIN_NONCE_RETENTION_SEC = 60 * 60;
/** A session whose workflow is still unstarted this long after its commit was orphaned by a crash. */
export const SESSION_RECONCILE_AFTER_SEC = 30;

export interface EnsureMaintenanceSchedulesOptions {
  /** Task queue of the scheduled workflows; `TASK_QUEUES.maintenance` by default. */
  taskQueue?: string;
}

interface MaintenanceSchedule<W extends Workflow> {
  scheduleId: string;
  every: string;
  workflowType: string;
  args: Parameters<W>;
  timeout: string;
}

const loginNonceCleanup: MaintenanceSchedule<typeof loginNonceCleanupWorkflow> = {
  scheduleId: LOGIN_NONCE_CLEANUP_SCHEDULE_ID,
  every: '1 hour',
  workflowType: 'loginNonceCleanupWorkflow',
  args: [{ olderThanSec: LOGIN_NONCE_RETENTION_SEC }],
  timeout: '30 minutes',
};

const sessionReconciler: MaintenanceSchedule<typeof sessionReconcilerWorkflow> = {
  scheduleId: SESSION_RECONCILER_SCHEDULE_ID,
  every: '1 minute',
  workflowType: 'sessionReconcilerWorkflow',
  args: [{ olderThanSec: SESSION_RECONCILE_AFTER_SEC }],
  timeout: '5 minutes',
};

/** Creates or updates every maintenance schedule; returns their ids. */
export async function ensureMaintenanceSchedules(
  client: Client,
  { taskQueue = TASK_QUEUES.maintenance }: EnsureMaintenanceSchedulesOptions = {},
): Promise<string[]> {
  const schedules = [loginNonceCleanup, sessionReconciler] as MaintenanceSchedule<Workflow>[];
  for (const schedule of schedules) {
    const action: ScheduleOptionsStartWorkflowAction<Workflow> = {
      type: 'startWorkflow',
      workflowType: schedule.workflowType,
      args: schedule.args,
      taskQueue,
      workflowId: schedule.scheduleId,
      workflowExecutionTimeout: schedule.timeout,
    };
    const definition = {
      spec: { intervals: [{ every: schedule.every }] },
      action,
      // A sweep that is late or missed is covered by the next one: never run two, never catch up.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    };
    try {
      await client.schedule.create({ scheduleId: schedule.scheduleId, ...definition });
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
      await client.schedule
        .getHandle(schedule.scheduleId)
        .update((previous) => ({ ...definition, state: previous.state }));
    }
  }
  return schedules.map((schedule) => schedule.scheduleId);
}
