import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { sql } from 'kysely';
import { Worker } from '@temporalio/worker';
import { createDb, type Db } from '../../db/client';
import { startTimeSkippingTestEnvironment } from '../../dev/services/temporal';
import { startOrphanSessionWorkflow } from '../../activities/sessionReconciler';
import { activitiesForRole } from '../../workers/createWorkers';
import { sessionWorkflowId } from '../../workflows/workflowIds';
import {
  depositDetectedSignal,
  paymentSessionWorkflow,
  sessionStateQuery,
} from '../../workflows/paymentSession';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { quietTemporalRuntime, startTestWorkers, type TestWorkers } from '../harness/workers';
import { sessionStarterFor } from '../../workflowClient/sessions';

async function waitForState<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const deposit = (chainId: number) => ({
  chainId,
  token: '0x0000000000000000000000000000000000000001',
  amount: '5000000',
  txHash: `0x${'ab'.repeat(32)}`,
  blockNumber: '12',
});

describe('the payment-session workflow on the time-skipping server', () => {
  let env: TestWorkflowEnvironment;
  let db: Db;
  let app: TestApp;
  let sk: { authorization: string };

  beforeAll(async () => {
    quietTemporalRuntime();
    env = await startTimeSkippingTestEnvironment();
    db = createDb({ connectionString: testStack().databaseUrl });
    // The app writes real sessions; its own workflow start goes to the dev server and is irrelevant here.
    app = await startTestApp();
    sk = { authorization: `Bearer ${await createApiKey(app, await signInNewMerchant(app))}` };
  });
  afterAll(async () => {
    await app?.close();
    await db?.destroy();
    await env?.teardown();
  });

  async function runWithWorker<T>(body: (taskQueue: string) => Promise<T>): Promise<T> {
    const taskQueue = `sessions-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: require.resolve('../../workflows'),
      activities: activitiesForRole('sessions', { db, temporal: env.client }),
    });
    return worker.runUntil(body(taskQueue));
  }

  /** One hour from now in the test server's clock (it runs ahead of wall time once a test skipped). */
  const inAnHour = async () => new Date((await env.currentTimeMs()) + 3600_000).toISOString();

  async function createSession(expiresInSec: number): Promise<string> {
    const response = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '5', sandboxMode: true, expiresInSec },
    });
    expect(response.status).toBe(201);
    return response.body.id;
  }

  it('an unpaid session is marked expired by the workflow’s own timer at expiresAt', async () => {
    const sessionId = await createSession(3600);
    const expiresAt = await inAnHour();
    const result = await runWithWorker((taskQueue) =>
      env.client.workflow.execute(paymentSessionWorkflow, {
        workflowId: sessionWorkflowId(sessionId),
        taskQueue,
        args: [{ sessionId, expiresAt }],
      }),
    );
    expect(result.status).toBe('expired');
    const after = await db
      .selectFrom('sessions')
      .select('status')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(after.status).toBe('expired');
  });

  it('a deposit before expiry moves the session to confirming with paidAt and txHash, and it never expires', async () => {
    const sessionId = await createSession(3600);
    const expiresAt = await inAnHour();
    const state = await runWithWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start(paymentSessionWorkflow, {
        workflowId: sessionWorkflowId(sessionId),
        taskQueue,
        args: [{ sessionId, expiresAt }],
      });
      expect(await handle.query(sessionStateQuery)).toEqual({ status: 'awaiting_payment' });
      await env.sleep('30 minutes');
      await handle.signal(depositDetectedSignal, deposit(84532));
      const confirming = await waitForState(
        () => handle.query(sessionStateQuery),
        (current) => current.status !== 'awaiting_payment',
      );
      // Settlement (chain activities) is another test's subject; this worker has no chains.
      await handle.terminate('test done');
      return confirming;
    });
    expect(state).toMatchObject({ status: 'confirming', deposit: deposit(84532) });
    const after = await db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(after).toMatchObject({
      status: 'confirming',
      tx_hash: deposit(84532).txHash,
      paid_chain_id: 84532,
    });
    expect(after.paid_at).toBeInstanceOf(Date);
  });
  it('a session paid on time whose workflow start was lost is confirmed when the reconciler starts it after its expiry', async () => {
    // The start timed out at creation (Temporal slow): no workflow, so the monitor's signal for the
    // on-time payment it recorded found none. The reconciler then starts the workflow after expiry.
    const sessionId = await createSession(60);
    const option = await db
      .selectFrom('payment_options')
      .selectAll()
      .where('session_id', '=', sessionId)
      .orderBy('chain_id')
      .executeTakeFirstOrThrow();
    const txHash = `0x${randomUUID().replaceAll('-', '').padEnd(64, '0')}`;
    await db
      .insertInto('deposits')
      .values({
        session_id: sessionId,
        chain_id: option.chain_id,
        token_address: option.token_address.toLowerCase(),
        deposit_address: option.deposit_address,
        amount: option.amount,
        tx_hash: txHash,
        log_index: 3,
        block_number: '12',
        kind: 'accepted',
      })
      .execute();
    // Expired by the workflow's clock (the test server runs ahead of wall time once a test skipped).
    const expiresAt = new Date((await env.currentTimeMs()) - 60_000);
    await sql`UPDATE sessions SET expires_at = ${expiresAt}, workflow_started_at = NULL WHERE id = ${sessionId}`.execute(
      db,
    );
    const session = await db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();

    const state = await runWithWorker(async (taskQueue) => {
      await startOrphanSessionWorkflow(
        { db, startSessionWorkflow: sessionStarterFor(env.client, taskQueue) },
        session,
      );
      const handle = env.client.workflow.getHandle(sessionWorkflowId(sessionId));
      const decided = await waitForState(
        () => handle.query(sessionStateQuery),
        (current) => current.status !== 'awaiting_payment',
      );
      // Settlement (chain activities) is another test's subject; this worker has no chains.
      await handle.terminate('test done');
      return decided;
    });
    expect(state).toMatchObject({
      status: 'confirming',
      deposit: { chainId: option.chain_id, txHash, amount: option.amount, logIndex: 3 },
    });
    const after = await db
      .selectFrom('sessions')
      .select(['status', 'tx_hash', 'workflow_started_at'])
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(after).toMatchObject({ status: 'confirming', tx_hash: txHash });
    expect(after.workflow_started_at).toBeInstanceOf(Date);
  });
});

describe('sessions on the Temporal dev server with the project worker', () => {
  let workers: TestWorkers;
  let app: TestApp;
  let sk: { authorization: string };

  beforeAll(async () => {
    workers = await startTestWorkers();
    app = await startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: workers.prefix });
    sk = { authorization: `Bearer ${await createApiKey(app, await signInNewMerchant(app))}` };
  });
  afterAll(async () => {
    await app?.close();
    await workers?.stop();
  });

  it('POST /v1/sessions starts session-<id> with its search attributes; a deposit signal makes it confirming', async () => {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '12', sandboxMode: true },
    });
    expect(created.status).toBe(201);
    const sessionId = created.body.id;
    const row = await workers.db
      .selectFrom('sessions')
      .select('workflow_started_at')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(row.workflow_started_at).toBeInstanceOf(Date);

    const handle = workers.client.workflow.getHandle(sessionWorkflowId(sessionId));
    const description = await handle.describe();
    expect(description.taskQueue).toBe(workers.taskQueues.sessions);
    expect(description.searchAttributes).toMatchObject({
      SessionStatus: ['awaiting_payment'],
      SandboxMode: [true],
    });

    await handle.signal(depositDetectedSignal, deposit(11155111));
    expect(
      await waitForState(
        () => handle.query(sessionStateQuery),
        (state) => state.status !== 'awaiting_payment',
      ),
    ).toMatchObject({ status: 'confirming' });
    expect((await app.request(`/v1/sessions/${sessionId}/status`)).body).toEqual({
      status: 'confirming',
      webhookDelivered: false,
    });
    expect((await handle.describe()).searchAttributes).toMatchObject({
      SessionStatus: ['confirming'],
      ChainId: [11155111],
    });
    await handle.terminate('test done: settlement is covered by test/settlement');
  });

  it('the reconciler starts the workflow of a session whose start was lost', async () => {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '3', sandboxMode: true },
    });
    const sessionId = created.body.id;
    // Simulate the crash between commit and start: no workflow, no mark, committed a while ago. The
    // reconciler takes the oldest orphans first, 100 a run, and other files' sessions share this database
    // (a test app stopped before its start marks flushed leaves some): this one is made the oldest.
    await workers.client.workflow.getHandle(sessionWorkflowId(sessionId)).terminate('simulated crash');
    await sql`UPDATE sessions SET workflow_started_at = NULL, created_at = timestamptz '2000-01-01 00:00:00Z' WHERE id = ${sessionId}`.execute(
      workers.db,
    );

    const { sessionReconcilerWorkflow } = await import('../../workflows/sessionReconciler');
    const result = await workers.client.workflow.execute(sessionReconcilerWorkflow, {
      workflowId: `reconcile-${randomUUID()}`,
      taskQueue: workers.taskQueues.maintenance,
      args: [{ olderThanSec: 30 }],
    });
    expect(result.started).toBeGreaterThanOrEqual(1);
    const row = await workers.db
      .selectFrom('sessions')
      .select('workflow_started_at')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(row.workflow_started_at).toBeInstanceOf(Date);
  });
});
