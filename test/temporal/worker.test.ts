import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createDb, type Db } from '../../db/client';
import { migrateToLatest } from '../../db/migrate';
import { temporalCliPath } from '../../dev/installTemporal';
import { dropDatabase, ensureDatabase } from '../../dev/services/postgres';
import { startTimeSkippingTestEnvironment } from '../../dev/services/temporal';
import { testStack } from '../harness/stack';
import { createWorkers, type TemporalWorkers } from '../../workers/createWorkers';
import { ensureMaintenanceSchedules, LOGIN_NONCE_RETENTION_SEC } from '../../workflowClient/schedules';
import {
  LOGIN_NONCE_CLEANUP_SCHEDULE_ID,
  MONTHLY_STATEMENTS_SCHEDULE_ID,
  PREPAID_BALANCE_CHECK_SCHEDULE_ID,
  SESSION_RECONCILER_SCHEDULE_ID,
} from '../../workflows/workflowIds';
import { ChainId, MerchantId, SandboxMode, SessionStatus } from '../../workflows/searchAttributes';
import { createTemporalClient, type TemporalClient } from '../../workflowClient/connection';
import type {
  loginNonceCleanupWorkflow,
  monthlyStatementsWorkflow,
  prepaidBalanceCheckWorkflow,
} from '../../workflows';
import { latestClosedMonth } from '../../billing/statementMonth';
import type { sleepTwoHoursWorkflow } from './sleepingWorkflow';

const run = promisify(execFile);

// The worker runtime logs every state change and the webpack summary at INFO; keep test output to problems.
Runtime.install({ logger: new DefaultLogger('WARN') });
const HOUR_MS = 60 * 60 * 1000;
const unique = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;

/** A database of its own on the test run's Postgres server (these tests empty whole tables), migrated. */
async function createTestDatabase(): Promise<{ db: Db; drop(): Promise<void> }> {
  const { adminDatabaseUrl } = testStack();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const db = createDb({ connectionString: await ensureDatabase(adminDatabaseUrl, name), maxConnections: 4 });
  await migrateToLatest(db);
  return {
    db,
    drop: async () => {
      await db.destroy();
      await dropDatabase(adminDatabaseUrl, name);
    },
  };
}

async function insertNonce(db: Db, nonce: string, expiresAt: Date): Promise<void> {
  await db
    .insertInto('login_nonces')
    .values({
      nonce,
      address: '0x00000000000000000000000000000000000000aa',
      chain_id: 1,
      expires_at: expiresAt,
    })
    .execute();
}

async function remainingNonces(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('login_nonces').select('nonce').orderBy('nonce').execute();
  return rows.map(({ nonce }) => nonce);
}

describe('Temporal dev server with the project worker', () => {
  let server: { address: string; namespace: string };
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let temporal: TemporalClient;
  let workerConnection: NativeConnection;
  let workers: TemporalWorkers;
  let running: Promise<void>;
  const maintenanceQueue = unique('maintenance-test');
  const billingQueue = unique('billing-test');

  beforeAll(async () => {
    // The run's shared dev server (test/globalSetup.ts); this file isolates by database and task queue.
    server = { address: testStack().temporalAddress, namespace: testStack().temporalNamespace };
    database = await createTestDatabase();
    temporal = await createTemporalClient({ address: server.address, namespace: server.namespace });
    workerConnection = await NativeConnection.connect({ address: server.address });
    workers = await createWorkers({
      connection: workerConnection,
      namespace: server.namespace,
      dependencies: { db: database.db, temporal: temporal.client },
      taskQueues: { maintenance: maintenanceQueue, billing: billingQueue },
    });
    running = workers.run();
  });

  afterAll(async () => {
    await workers?.shutdown();
    await running;
    await workerConnection?.close();
    await temporal?.close();
    await database?.drop();
  });

  beforeEach(async () => {
    await database.db.deleteFrom('login_nonces').execute();
  });

  const taskQueues = { maintenance: maintenanceQueue, billing: billingQueue };
  const SCHEDULE_IDS = [
    LOGIN_NONCE_CLEANUP_SCHEDULE_ID,
    SESSION_RECONCILER_SCHEDULE_ID,
    MONTHLY_STATEMENTS_SCHEDULE_ID,
    PREPAID_BALANCE_CHECK_SCHEDULE_ID,
  ];
  /** The schedules are namespace-wide: remove every one the test made. */
  async function deleteSchedules(): Promise<void> {
    for (const scheduleId of SCHEDULE_IDS)
      await temporal.client.schedule
        .getHandle(scheduleId)
        .delete()
        .catch(() => undefined);
  }

  test('the cleanup workflow deletes nonces that expired before the grace period and keeps the rest', async () => {
    const now = Date.now();
    await insertNonce(database.db, 'expired-3h-ago', new Date(now - 3 * HOUR_MS));
    await insertNonce(database.db, 'expired-2h-ago', new Date(now - 2 * HOUR_MS));
    await insertNonce(database.db, 'expired-10min-ago', new Date(now - 10 * 60 * 1000));
    await insertNonce(database.db, 'valid-for-5min', new Date(now + 5 * 60 * 1000));

    const result = await temporal.client.workflow.execute<typeof loginNonceCleanupWorkflow>(
      'loginNonceCleanupWorkflow',
      {
        taskQueue: maintenanceQueue,
        workflowId: unique('login-nonce-cleanup-test'),
        args: [{ olderThanSec: 3600 }],
      },
    );

    expect(result.deleted).toBe(2);
    const cutoff = Date.parse(result.olderThan);
    expect(cutoff).toBeGreaterThan(now - HOUR_MS - 1_000);
    expect(cutoff).toBeLessThan(Date.now() - HOUR_MS + 1_000);
    expect(await remainingNonces(database.db)).toEqual(['expired-10min-ago', 'valid-for-5min']);
  });

  test('the cleanup also deletes expired e-mail codes and the counters of ended windows', async () => {
    const now = Date.now();
    const code = (subject: string, expiresAt: Date) => ({
      purpose: 'login' as const,
      subject,
      email: subject,
      merchant_id: null,
      code_hash: 'f'.repeat(64),
      expires_at: expiresAt,
      created_at: new Date(expiresAt.getTime() - 10 * 60 * 1000),
    });
    await database.db
      .insertInto('email_codes')
      .values([
        code('expired-2h-ago@example.com', new Date(now - 2 * HOUR_MS)),
        code('live@example.com', new Date(now + 5 * 60 * 1000)),
      ])
      .execute();
    const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS;
    await database.db
      .insertInto('email_code_counters')
      .values([
        { counter_key: 'ip:192.0.2.1', window_start: new Date(hourStart - 3 * HOUR_MS), used: 5 },
        { counter_key: 'ip:192.0.2.1', window_start: new Date(hourStart), used: 1 },
      ])
      .execute();

    const result = await temporal.client.workflow.execute<typeof loginNonceCleanupWorkflow>(
      'loginNonceCleanupWorkflow',
      {
        taskQueue: maintenanceQueue,
        workflowId: unique('login-nonce-cleanup-test'),
        args: [{ olderThanSec: 3600 }],
      },
    );

    expect(result.emailCodesDeleted).toBe(2);
    const codes = await database.db.selectFrom('email_codes').select('subject').execute();
    expect(codes.map((row) => row.subject)).toEqual(['live@example.com']);
    const counters = await database.db.selectFrom('email_code_counters').select('window_start').execute();
    expect(counters.map((row) => row.window_start.getTime())).toEqual([hourStart]);
  });

  test('a negative grace period fails the workflow without touching the table', async () => {
    await insertNonce(database.db, 'expired-2h-ago', new Date(Date.now() - 2 * HOUR_MS));
    await expect(
      temporal.client.workflow.execute<typeof loginNonceCleanupWorkflow>('loginNonceCleanupWorkflow', {
        taskQueue: maintenanceQueue,
        workflowId: unique('login-nonce-cleanup-test'),
        args: [{ olderThanSec: -1 }],
      }),
    ).rejects.toMatchObject({
      cause: { message: expect.stringContaining('olderThanSec must be a non-negative') },
    });
    expect(await remainingNonces(database.db)).toEqual(['expired-2h-ago']);
  });

  test('the hourly login-nonce-cleanup schedule is created once and its run sweeps the table', async () => {
    const handle = temporal.client.schedule.getHandle(LOGIN_NONCE_CLEANUP_SCHEDULE_ID);
    try {
      expect(await ensureMaintenanceSchedules(temporal.client, { taskQueues })).toEqual(SCHEDULE_IDS);
      await handle.pause('paused by the test');
      // A second start-up finds the schedule, keeps the operator's pause and changes nothing else.
      await ensureMaintenanceSchedules(temporal.client, { taskQueues });

      const description = await handle.describe();
      expect(description.spec.intervals).toMatchObject([{ every: HOUR_MS }]);
      expect(description.state.paused).toBe(true);
      expect(description.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'loginNonceCleanupWorkflow',
        taskQueue: maintenanceQueue,
        args: [{ olderThanSec: LOGIN_NONCE_RETENTION_SEC }],
      });

      await insertNonce(database.db, 'expired-2h-ago', new Date(Date.now() - 2 * HOUR_MS));
      await insertNonce(database.db, 'valid-for-5min', new Date(Date.now() + 5 * 60 * 1000));
      await handle.trigger();
      let started: { workflowId: string; firstExecutionRunId: string } | undefined;
      for (let attempt = 0; attempt < 100 && !started; attempt++) {
        started = (await handle.describe()).info.recentActions[0]?.action.workflow;
        if (!started) await delay(100);
      }
      expect(started).toBeDefined();
      const result = await temporal.client.workflow
        .getHandle<typeof loginNonceCleanupWorkflow>(started!.workflowId, started!.firstExecutionRunId)
        .result();
      expect(started!.workflowId.startsWith(LOGIN_NONCE_CLEANUP_SCHEDULE_ID)).toBe(true);
      expect(result.deleted).toBe(1);
      expect(await remainingNonces(database.db)).toEqual(['valid-for-5min']);
    } finally {
      await deleteSchedules();
    }
  });

  test('the monthly-statements schedule fires at 00:15 UTC on the 1st; its run makes the closed month statements', async () => {
    const before = latestClosedMonth(new Date());
    // A merchant whose account existed in the closed month, with a top-up inside it; and one created now.
    const [existing, newcomer] = [unique('0xold'), unique('0xnew')];
    const { id: existingId } = await database.db
      .insertInto('merchants')
      .values({ wallet_address: existing, payout_address: existing, created_at: before.start })
      .returning('id')
      .executeTakeFirstOrThrow();
    await database.db
      .insertInto('merchants')
      .values({ wallet_address: newcomer, payout_address: newcomer })
      .execute();
    await database.db
      .insertInto('prepaid_ledger_entries')
      .values({
        merchant_id: existingId,
        direction: 'credit',
        amount_usd: '12.340000',
        description: 'Prepaid gas top-up',
        created_at: new Date(before.start.getTime() + 1000),
      })
      .execute();
    const handle = temporal.client.schedule.getHandle(MONTHLY_STATEMENTS_SCHEDULE_ID);
    try {
      await ensureMaintenanceSchedules(temporal.client, { taskQueues });
      const description = await handle.describe();
      expect(description.spec.calendars).toMatchObject([
        { dayOfMonth: [{ start: 1 }], hour: [{ start: 0 }], minute: [{ start: 15 }] },
      ]);
      const nextRun = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1, 0, 15));
      expect(description.info.nextActionTimes[0]?.toISOString()).toBe(nextRun.toISOString());
      expect(description.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'monthlyStatementsWorkflow',
        taskQueue: billingQueue,
      });

      await handle.trigger();
      let started: { workflowId: string; firstExecutionRunId: string } | undefined;
      for (let attempt = 0; attempt < 100 && !started; attempt++) {
        started = (await handle.describe()).info.recentActions[0]?.action.workflow;
        if (!started) await delay(100);
      }
      const result = await temporal.client.workflow
        .getHandle<typeof monthlyStatementsWorkflow>(started!.workflowId, started!.firstExecutionRunId)
        .result();
      expect([before.month, latestClosedMonth(new Date()).month]).toContain(result.month);
      expect(result).toMatchObject({ generated: 1, failed: 0 });
      const statements = await database.db
        .selectFrom('billing_statements')
        .select(['merchant_id', 'month', 'credits_usd', 'closing_balance_usd'])
        .execute();
      expect(statements).toEqual([
        {
          merchant_id: existingId,
          month: result.month,
          credits_usd: '12.340000',
          closing_balance_usd: '12.340000',
        },
      ]);
    } finally {
      await deleteSchedules();
    }
  });

  test('issue 12 finding 7: the daily prepaid-balance-check run recomputes every balance from the ledger and fails naming a drift', async () => {
    const wallet = unique('0xledger');
    const { id: merchantId } = await database.db
      .insertInto('merchants')
      .values({ wallet_address: wallet, payout_address: wallet })
      .returning('id')
      .executeTakeFirstOrThrow();
    await database.db
      .insertInto('prepaid_ledger_entries')
      .values([
        { merchant_id: merchantId, direction: 'credit', amount_usd: '20', description: 'top-up' },
        { merchant_id: merchantId, direction: 'debit', amount_usd: '1.5', description: 'gas' },
      ])
      .execute();
    const handle = temporal.client.schedule.getHandle(PREPAID_BALANCE_CHECK_SCHEDULE_ID);
    try {
      await ensureMaintenanceSchedules(temporal.client, { taskQueues });
      const description = await handle.describe();
      expect(description.spec.calendars).toMatchObject([{ hour: [{ start: 2 }], minute: [{ start: 30 }] }]);
      expect(description.action).toMatchObject({
        workflowType: 'prepaidBalanceCheckWorkflow',
        taskQueue: billingQueue,
      });
      const check = () =>
        temporal.client.workflow.execute<typeof prepaidBalanceCheckWorkflow>('prepaidBalanceCheckWorkflow', {
          taskQueue: billingQueue,
          workflowId: unique('prepaid-balance-check'),
        });
      await expect(check()).resolves.toEqual({ checked: true });

      await database.db
        .updateTable('prepaid_balances')
        .set({ balance_usd: '99' })
        .where('merchant_id', '=', merchantId)
        .execute();
      const failure = await check().catch((error: { cause?: { message?: string; type?: string } }) => error);
      expect(failure).toMatchObject({
        cause: {
          type: 'PrepaidBalanceDrift',
          message: `running prepaid balance differs from the ledger for 1 merchant(s): ${merchantId} running 99.000000 ledger 18.500000`,
        },
      });
    } finally {
      await deleteSchedules();
    }
  });

  test('the session search attributes are registered with their types', async () => {
    const { stdout } = await run(temporalCliPath(), [
      'operator',
      'search-attribute',
      'list',
      '--address',
      server.address,
      '--namespace',
      server.namespace,
      '--output',
      'json',
    ]);
    const { customAttributes } = JSON.parse(stdout) as { customAttributes: Record<string, string> };
    expect(customAttributes).toMatchObject({
      MerchantId: 'INDEXED_VALUE_TYPE_KEYWORD',
      SessionStatus: 'INDEXED_VALUE_TYPE_KEYWORD',
      ChainId: 'INDEXED_VALUE_TYPE_INT',
      SandboxMode: 'INDEXED_VALUE_TYPE_BOOL',
    });
  });

  test('an operator finds a workflow by merchant, status, chain and sandbox mode', async () => {
    const merchantId = unique('merchant');
    const handle = await temporal.client.workflow.start('searchAttributeProbe', {
      // No worker polls this queue: the execution stays open, which is what a stuck session looks like.
      taskQueue: unique('unpolled'),
      workflowId: unique('search-attribute-probe'),
      typedSearchAttributes: [
        { key: MerchantId, value: merchantId },
        { key: SessionStatus, value: 'confirming' },
        { key: ChainId, value: 84532 },
        { key: SandboxMode, value: true },
      ],
    });
    try {
      const query = `MerchantId = '${merchantId}' AND SessionStatus = 'confirming' AND ChainId = 84532 AND SandboxMode = true`;
      let found: string[] = [];
      for (let attempt = 0; attempt < 100 && found.length === 0; attempt++) {
        found = [];
        for await (const execution of temporal.client.workflow.list({ query }))
          found.push(execution.workflowId);
        if (found.length === 0) await delay(100);
      }
      expect(found).toEqual([handle.workflowId]);

      const description = await handle.describe();
      expect(description.typedSearchAttributes.get(ChainId)).toBe(84532);
      expect(description.typedSearchAttributes.get(SandboxMode)).toBe(true);
    } finally {
      await handle.terminate('search attribute probe done');
    }
  });
});

describe('time-skipping test server', () => {
  test('a workflow that sleeps two hours completes in seconds of wall-clock time', async () => {
    const env = await startTimeSkippingTestEnvironment();
    try {
      const taskQueue = unique('time-skipping');
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowsPath: require.resolve('./sleepingWorkflow'),
      });
      const startedAt = Date.now();
      const { sleptMs } = await worker.runUntil(
        env.client.workflow.execute<typeof sleepTwoHoursWorkflow>('sleepTwoHoursWorkflow', {
          taskQueue,
          workflowId: unique('sleep-two-hours'),
        }),
      );
      expect(sleptMs).toBeGreaterThanOrEqual(2 * HOUR_MS);
      expect(Date.now() - startedAt).toBeLessThan(15_000);
    } finally {
      await env.teardown();
    }
  });
});
