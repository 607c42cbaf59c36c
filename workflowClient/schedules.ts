import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleSpec,
  type Workflow,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { loginNonceCleanupWorkflow } from '../workflows/loginNonceCleanup';
import type { monthlyStatementsWorkflow } from '../workflows/monthlyStatements';
import type { prepaidBalanceCheckWorkflow } from '../workflows/prepaidBalanceCheck';
import type { sessionReconcilerWorkflow } from '../workflows/sessionReconciler';
import { TASK_QUEUES, type TaskQueueRole } from '../workflows/taskQueues';
import {
  LOGIN_NONCE_CLEANUP_SCHEDULE_ID,
  MONTHLY_STATEMENTS_SCHEDULE_ID,
  PREPAID_BALANCE_CHECK_SCHEDULE_ID,
  SESSION_RECONCILER_SCHEDULE_ID,
  scheduleWorkflowId,
} from '../workflows/workflowIds';

/**
 * Schedules the code owns (housekeeping sweeps, monthly statements). `ensureMaintenanceSchedules` is run at start-up (dev stack,
 * deployments): it creates missing schedules and brings existing ones back to the definition here,
 * keeping whatever an operator set on their state (paused, note).
 */

/** Expired login nonces are kept this long before the hourly sweep deletes them. */
export const LOGIN_NONCE_RETENTION_SEC = 60 * 60;
/** A session whose workflow is still unstarted this long after its commit was orphaned by a crash. */
export const SESSION_RECONCILE_AFTER_SEC = 30;

export interface EnsureMaintenanceSchedulesOptions {
  /** Task queue names per role over `TASK_QUEUES` (tests pass their own). */
  taskQueues?: Partial<Record<TaskQueueRole, string>>;
  /**
   * Before each schedule id (and its workflows' ids): the worker's TEMPORAL_TASK_QUEUE_PREFIX, so stacks
   * sharing a namespace on prefixed queues each keep their own schedules. Empty by default.
   */
  idPrefix?: string;
}

interface MaintenanceSchedule<W extends Workflow> {
  scheduleId: string;
  spec: ScheduleSpec;
  taskQueueRole: TaskQueueRole;
  workflowType: string;
  args: Parameters<W>;
  timeout: Duration;
  /** How late a missed run may still start (the cluster or the scheduler was down at its time). */
  catchupWindow: Duration;
}

const loginNonceCleanup: MaintenanceSchedule<typeof loginNonceCleanupWorkflow> = {
  scheduleId: LOGIN_NONCE_CLEANUP_SCHEDULE_ID,
  spec: { intervals: [{ every: '1 hour' }] },
  taskQueueRole: 'maintenance',
  workflowType: 'loginNonceCleanupWorkflow',
  args: [{ olderThanSec: LOGIN_NONCE_RETENTION_SEC }],
  timeout: '30 minutes',
  // A sweep that is late or missed is covered by the next one: never catch up.
  catchupWindow: '1 minute',
};

const sessionReconciler: MaintenanceSchedule<typeof sessionReconcilerWorkflow> = {
  scheduleId: SESSION_RECONCILER_SCHEDULE_ID,
  spec: { intervals: [{ every: '1 minute' }] },
  taskQueueRole: 'maintenance',
  workflowType: 'sessionReconcilerWorkflow',
  args: [{ olderThanSec: SESSION_RECONCILE_AFTER_SEC }],
  timeout: '5 minutes',
  catchupWindow: '1 minute',
};

/**
 * 00:15 UTC on the 1st: the closed month's statements. The quarter hour lets ledger transactions that
 * began before midnight (their entries are dated when they began) commit first.
 */
const monthlyStatements: MaintenanceSchedule<typeof monthlyStatementsWorkflow> = {
  scheduleId: MONTHLY_STATEMENTS_SCHEDULE_ID,
  spec: { calendars: [{ dayOfMonth: 1, hour: 0, minute: 15 }] },
  taskQueueRole: 'billing',
  workflowType: 'monthlyStatementsWorkflow',
  args: [{}],
  timeout: '1 day',
  // A missed run still matters (there is no next one for that month): catch up within a week.
  catchupWindow: '7 days',
};

/** 02:30 UTC daily: every running prepaid balance recomputed from the ledger; a drift fails the run. */
const prepaidBalanceCheck: MaintenanceSchedule<typeof prepaidBalanceCheckWorkflow> = {
  scheduleId: PREPAID_BALANCE_CHECK_SCHEDULE_ID,
  spec: { calendars: [{ hour: 2, minute: 30 }] },
  taskQueueRole: 'billing',
  workflowType: 'prepaidBalanceCheckWorkflow',
  args: [],
  timeout: '1 hour',
  // The next day's run checks the same thing: a missed one is not caught up.
  catchupWindow: '1 minute',
};

/** Creates or updates every schedule the code owns; returns their ids. */
export async function ensureMaintenanceSchedules(
  client: Client,
  { taskQueues = {}, idPrefix = '' }: EnsureMaintenanceSchedulesOptions = {},
): Promise<string[]> {
  const names = { ...TASK_QUEUES, ...taskQueues };
  const schedules = [
    loginNonceCleanup,
    sessionReconciler,
    monthlyStatements,
    prepaidBalanceCheck,
  ] as MaintenanceSchedule<Workflow>[];
  for (const schedule of schedules) {
    const action: ScheduleOptionsStartWorkflowAction<Workflow> = {
      type: 'startWorkflow',
      workflowType: schedule.workflowType,
      args: schedule.args,
      taskQueue: names[schedule.taskQueueRole],
      workflowId: scheduleWorkflowId(schedule.scheduleId, idPrefix),
      workflowExecutionTimeout: schedule.timeout,
    };
    const definition = {
      spec: schedule.spec,
      action,
      // Never two runs of one schedule at once.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: schedule.catchupWindow },
    };
    try {
      await client.schedule.create({
        scheduleId: scheduleWorkflowId(schedule.scheduleId, idPrefix),
        ...definition,
      });
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
      await client.schedule
        .getHandle(scheduleWorkflowId(schedule.scheduleId, idPrefix))
        .update((previous) => ({ ...definition, state: previous.state }));
    }
  }
  return schedules.map((schedule) => scheduleWorkflowId(schedule.scheduleId, idPrefix));
}
