import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createDb, type Db } from '../../db/client';
import { startTimeSkippingTestEnvironment } from '../../dev/services/temporal';
import { activitiesForRole } from '../../workers/createWorkers';
import { sessionWorkflowId } from '../../workflows/workflowIds';
import { paymentSessionWorkflow } from '../../workflows/paymentSession';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';

type History = temporal.api.history.v1.IHistory;
const EventType = temporal.api.enums.v1.EventType;

/**
 * Histories the payment-session workflow made before its expiry became one activity (docs/decisions.md
 * "Expiry in one activity"), recorded from the code of commit 0ebe882 on the time-skipping server with
 * the project's session activities (protobuf, base64): one session expired by the old path (the wait,
 * the status write and the deliveries' start, three activities) and one awaiting payment with its timer
 * started, as a deploy finds a running session.
 */
const recorded = (name: string): History =>
  temporal.api.history.v1.History.decode(
    Buffer.from(readFileSync(join(__dirname, 'histories', `${name}.b64`), 'utf8'), 'base64'),
  );

const workflowsPath = require.resolve('../../workflows');

/** The activities the history scheduled, and its workflow tasks completed after its timer fired. */
function expiryShape(history: History) {
  const events = history.events ?? [];
  const timerFired = events.findIndex((event) => event.eventType === EventType.EVENT_TYPE_TIMER_FIRED);
  return {
    activities: events
      .filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      .map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name),
    workflowTasksAfterTimer: events
      .slice(timerFired)
      .filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length,
  };
}

describe('the expiry in one activity replays the histories of running sessions', () => {
  let env: TestWorkflowEnvironment;
  let db: Db;
  let app: TestApp;

  beforeAll(async () => {
    quietTemporalRuntime();
    env = await startTimeSkippingTestEnvironment();
    db = createDb({ connectionString: testStack().databaseUrl });
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
    await db?.destroy();
    await env?.teardown();
  });

  it('a session expired by the old path (three activities) and one awaiting payment replay unchanged', async () => {
    const expired = recorded('paymentSession-expired-before-one-activity-expiry');
    expect(expiryShape(expired)).toEqual({
      activities: ['awaitDepositScansPast', 'markSessionExpired', 'startWebhookDeliveries'],
      workflowTasksAfterTimer: 4,
    });
    await Worker.runReplayHistory({ workflowsPath }, expired);
    await Worker.runReplayHistory(
      { workflowsPath },
      recorded('paymentSession-awaiting-before-one-activity-expiry'),
    );
  });

  it('an unpaid session now expires in one activity, two workflow tasks after its timer, and its history replays', async () => {
    const sk = { authorization: `Bearer ${await createApiKey(app, await signInNewMerchant(app))}` };
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '5', sandboxMode: true, expiresInSec: 3600 },
    });
    expect(created.status).toBe(201);
    const sessionId = created.body.id as string;
    const taskQueue = `sessions-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath,
      activities: activitiesForRole('sessions', { db, temporal: env.client }),
    });
    const history = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(paymentSessionWorkflow, {
        workflowId: sessionWorkflowId(sessionId),
        taskQueue,
        args: [{ sessionId, expiresAt: new Date((await env.currentTimeMs()) + 3600_000).toISOString() }],
      });
      expect((await handle.result()).status).toBe('expired');
      return handle.fetchHistory();
    });
    expect(expiryShape(history)).toEqual({
      activities: ['expireAfterDepositScans'],
      workflowTasksAfterTimer: 2,
    });
    const session = await db
      .selectFrom('sessions')
      .select('status')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(session.status).toBe('expired');
    await Worker.runReplayHistory({ workflowsPath }, history);
  });
});
