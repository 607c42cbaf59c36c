import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { encodeFunctionData, parseAbi, type Address } from 'viem';
import { createSessionReconcilerActivities } from '../../activities/sessionReconciler';
import { createApp } from '../../api/app';
import { createLogger } from '../../logging/logger';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { loadConfig } from '../../config';
import { LOCAL_PAYMASTER_SIGNER } from '../../dev/chains/deployLocalChain';
import { createDb, type Db } from '../../db/client';
import { migrateToLatest } from '../../db/migrate';
import { findFreePort } from '../../dev/services/freePort';
import { ensureDatabase } from '../../dev/services/postgres';
import { startPrivatePostgres, type PrivatePostgres } from '../harness/embeddedPostgresProcess';
import { startTemporalDevServer, type TemporalDevServer } from '../../dev/services/temporal';
import { taskQueueNames } from '../../workflows/taskQueues';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../harness/stack';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import type { TestApp } from '../harness/app';
import { allowContract, createPaymasterClient, paymasterRpc } from '../paymaster/paymasterApi';
import { sessionStarterFor } from '../../workflowClient/sessions';

/**
 * Fail fast and say so (issue 22): each dependency of the api is taken away for real — the Temporal dev
 * server stopped, Postgres frozen with SIGSTOP, the signer process frozen — while requests keep coming.
 * The affected routes answer within their deadline plus a second (201 or 503 with Retry-After, never a
 * hang), `/ready` turns 503 within 2 s of the fault and 200 within 5 s of the recovery, and afterwards no
 * session lacks its workflow and no request was applied twice. This world is private to the file:
 * freezing the run's shared Postgres or Temporal would stall every other test.
 */
const DEADLINES = {
  TEMPORAL_START_TIMEOUT_MS: 2_000,
  DATABASE_ACQUIRE_TIMEOUT_MS: 2_000,
  DATABASE_STATEMENT_TIMEOUT_MS: 3_000,
  SIGNER_TIMEOUT_MS: 2_000,
  READY_CHECK_TIMEOUT_MS: 1_000,
};
const TARGET: Address = '0x1000000000000000000000000000000000000001';

describe('fail fast: bounded waits on every dependency, and /ready', () => {
  let workDir: string;
  let postgres: PrivatePostgres;
  let stopPostgres: () => Promise<void>;
  let databaseUrl: string;
  let temporal: TemporalDevServer;
  let temporalPorts: { port: number; uiPort: number };
  let signer: ChildProcess;
  let appDb: Db;
  let app: TestApp & { koaClose(): Promise<void> };
  let merchant: SignedInMerchant;
  let sk: { authorization: string };
  const prefix = `f${randomBytes(3).toString('hex')}-`;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'stablepay-failfast-'));
    await chmod(workDir, 0o755);
    postgres = await startPrivatePostgres(join(workDir, 'postgres'));
    stopPostgres = postgres.stop;
    databaseUrl = await ensureDatabase(postgres.adminUrl, 'stablepay_failfast');
    const migrator = createDb({ connectionString: databaseUrl, maxConnections: 1 });
    await migrateToLatest(migrator);
    await migrator.destroy();

    temporalPorts = { port: await findFreePort(), uiPort: await findFreePort() };
    temporal = await startTemporalDevServer({
      silent: true,
      dbFile: join(workDir, 'temporal.sqlite'),
      ...temporalPorts,
    });

    const stack = testStack();
    const signerPort = await findFreePort();
    const secret = randomBytes(24).toString('hex');
    signer = spawn(process.execPath, ['--import', 'tsx', 'signer/main.ts'], {
      cwd: join(__dirname, '..', '..'),
      env: {
        ...process.env,
        LOG_LEVEL: 'warn',
        SIGNER_PORT: String(signerPort),
        SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
        SIGNER_SHARED_SECRET: secret,
        DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
        ...Object.fromEntries(stack.chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
      },
      stdio: 'ignore',
    });
    const signerUrl = `http://127.0.0.1:${signerPort}`;
    await until(async () => (await fetch(`${signerUrl}/health`).catch(() => undefined))?.ok === true, 30_000);

    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE_PREFIX: prefix,
      DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
      ...Object.fromEntries(stack.chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
      SIGNER_URL: signerUrl,
      SIGNER_SHARED_SECRET: secret,
      ...Object.fromEntries(Object.entries(DEADLINES).map(([name, value]) => [name, String(value)])),
    });
    appDb = createDb({
      connectionString: databaseUrl,
      acquireTimeoutMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      onIdleError: () => undefined,
    });
    // Warnings and errors, kept: the Temporal and signer tests read which deadline ended their waits.
    const logLines: string[] = [];
    const logger = createLogger({ level: 'warn' }, { write: (line: string) => void logLines.push(line) });
    const built = await createApp({ config, db: appDb, logger });
    const server = built.koa.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    app = {
      baseUrl,
      db: appDb,
      config,
      routes: built.routes,
      logLines,
      async request(path, init = {}) {
        const { json, ...rest } = init;
        const headers = new Headers(rest.headers);
        if (json !== undefined) headers.set('content-type', 'application/json');
        const response = await fetch(`${baseUrl}${path}`, {
          ...rest,
          headers,
          body: json !== undefined ? JSON.stringify(json) : rest.body,
        });
        const text = await response.text();
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        return { status: response.status, headers: response.headers, text, body };
      },
      async close() {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
      koaClose: built.close,
    };
    merchant = await signInNewMerchant(app);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
  }, 180_000);

  afterAll(async () => {
    if (signer && signer.exitCode === null) {
      signer.kill('SIGCONT');
      signer.kill('SIGTERM');
    }
    postgres?.thaw();
    await app?.close();
    await app?.koaClose();
    await appDb?.destroy();
    await temporal?.stop();
    await stopPostgres?.();
  }, 60_000);

  const timed = async <T>(call: () => Promise<T>) => {
    const started = performance.now();
    const result = await call();
    return { result, ms: performance.now() - started };
  };
  const ready = () => app.request('/ready');
  /** Milliseconds until /ready answers `status` (polled every 100 ms), failing after `withinMs`. */
  async function readyBecomes(status: number, withinMs: number): Promise<number> {
    const started = performance.now();
    await until(async () => (await ready()).status === status, withinMs);
    return performance.now() - started;
  }
  const createSession = () =>
    app.request('/v1/sessions', { method: 'POST', headers: sk, json: { amount: '5', sandboxMode: true } });

  it('answers /ready 200 with one line per dependency when everything is up', async () => {
    const response = await ready();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(response.text.trim().split('\n')).toEqual([
      expect.stringMatching(/^postgres ok \d+ ms$/),
      expect.stringMatching(/^temporal ok \d+ ms$/),
      expect.stringMatching(/^signer ok \d+ ms$/),
    ]);
    expect((await app.request('/health')).status).toBe(200);
  });

  it('Temporal stopped: session creation answers 201 within its deadline; /ready says so; after the restart every session gets its workflow, once', async () => {
    await temporal.stop();
    try {
      expect(await readyBecomes(503, 2_000)).toBeLessThan(2_000);
      expect((await ready()).text).toMatch(/^temporal unavailable \(/m);
      const created: string[] = [];
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const linesBefore = app.logLines.length;
        const { result, ms } = await timed(createSession);
        expect(result.status).toBe(201);
        // The configured deadline (or Temporal's refusal before it) ended the one wait on the start: the api
        // logs the start it left to the reconciler. The whole answer's time also holds the session's writes,
        // which a loaded machine stretches (3.5 s once in CI), so its bound only says it did not hang.
        const unstarted = loggedSince<{ err?: { message?: string } }>(
          app.logLines,
          linesBefore,
          'session workflow not started; left to the reconciler',
        );
        expect(unstarted.map((line) => line.err?.message)).toEqual([
          `Temporal did not answer within ${DEADLINES.TEMPORAL_START_TIMEOUT_MS} ms`,
        ]);
        expect(ms).toBeLessThan(DEADLINES.TEMPORAL_START_TIMEOUT_MS + 5_000);
        created.push(result.body.id);
      }
      // retry-webhook needs Temporal: 503 with Retry-After, within its deadline, nothing applied.
      const { result: retried, ms: retryMs } = await timed(() =>
        app.request(`/v1/sessions/${created[0]}/retry-webhook`, { method: 'POST', headers: sk }),
      );
      expect([409, 503]).toContain(retried.status);
      expect(retryMs).toBeLessThan(DEADLINES.TEMPORAL_START_TIMEOUT_MS + 1_000);

      temporal = await startTemporalDevServer({
        silent: true,
        dbFile: join(workDir, 'temporal.sqlite'),
        ...temporalPorts,
      });
      expect(await readyBecomes(200, 5_000)).toBeLessThan(5_000);

      // The reconciler (its schedule runs it every minute) starts what the outage left unstarted.
      const connection = await Connection.connect({ address: temporal.address });
      try {
        const client = new Client({ connection, namespace: temporal.namespace });
        const reconciler = createSessionReconcilerActivities({
          db: appDb,
          startSessionWorkflow: sessionStarterFor(client, taskQueueNames(prefix).sessions),
        });
        expect(await reconciler.startMissingSessionWorkflows({ olderThanSec: 0 })).toBe(created.length);
        for (const id of created) {
          const description = await client.workflow.getHandle(`session-${id}`).describe();
          expect(description.status.name).toBe('RUNNING');
        }
        const rows = await appDb
          .selectFrom('sessions')
          .select(['id', 'workflow_started_at'])
          .where('merchant_id', '=', merchant.merchantId)
          .execute();
        expect(rows.filter((row) => created.includes(row.id))).toHaveLength(created.length);
        expect(rows.every((row) => row.workflow_started_at !== null)).toBe(true);
        expect(await reconciler.startMissingSessionWorkflows({ olderThanSec: 0 })).toBe(0);
      } finally {
        await connection.close();
      }
    } finally {
      if ((await ready()).status !== 200)
        temporal = await startTemporalDevServer({
          silent: true,
          dbFile: join(workDir, 'temporal.sqlite'),
          ...temporalPorts,
        }).catch(() => temporal);
    }
  }, 120_000);

  it('Postgres frozen (SIGSTOP): database routes answer 503 with Retry-After within their deadline; /ready says so; nothing is applied twice after SIGCONT', async () => {
    const before = await appDb
      .selectFrom('sessions')
      .select('id')
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    postgres.freeze();
    let resumed = false;
    try {
      expect(await readyBecomes(503, 2_000)).toBeLessThan(2_000);
      expect((await ready()).text).toMatch(/^postgres unavailable \(/m);
      const bound =
        Math.max(DEADLINES.DATABASE_ACQUIRE_TIMEOUT_MS, DEADLINES.DATABASE_STATEMENT_TIMEOUT_MS + 1_000) +
        1_000;
      const answers = await Promise.all(
        [() => app.request('/v1/merchants/me', { headers: merchant.auth }), createSession, createSession].map(
          (call) => timed(call),
        ),
      );
      for (const { result, ms } of answers) {
        expect(result.status).toBe(503);
        expect(result.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(result.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
        expect(ms).toBeLessThan(bound);
      }
      postgres.thaw();
      resumed = true;
      expect(await readyBecomes(200, 5_000)).toBeLessThan(5_000);
      // The creations that answered 503 were not applied, not even once the server woke up.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const after = await appDb
        .selectFrom('sessions')
        .select('id')
        .where('merchant_id', '=', merchant.merchantId)
        .execute();
      expect(after).toHaveLength(before.length);
      expect((await createSession()).status).toBe(201);
    } finally {
      if (!resumed) postgres.thaw();
    }
  }, 120_000);

  it('the signer frozen: the paymaster answers paymaster_upstream_error within the signer deadline; /ready says so', async () => {
    const client = await createPaymasterClient(app, merchant, { allowedChainIds: [84532] });
    await allowContract(app, merchant, 84532, TARGET);
    const request = {
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_getPaymasterData',
      params: [
        {
          sender: '0x4000000000000000000000000000000000000004',
          nonce: '0x1',
          callData: encodeFunctionData({
            abi: parseAbi(['function execute(address target, uint256 value, bytes data)']),
            functionName: 'execute',
            args: [TARGET, 0n, '0x'],
          }),
          callGasLimit: '0x186a0',
          verificationGasLimit: '0x30000',
          preVerificationGas: '0xc350',
          maxFeePerGas: '0x3b9aca00',
          maxPriorityFeePerGas: '0x1',
          signature: '0x',
        },
        ENTRY_POINT_V07_ADDRESS,
        '0x14a34',
      ],
    };
    signer.kill('SIGSTOP');
    let resumed = false;
    try {
      expect(await readyBecomes(503, 2_000)).toBeLessThan(2_000);
      expect((await ready()).text).toMatch(/^signer unavailable \(no answer within 1000 ms\)$/m);
      const linesBefore = app.logLines.length;
      const { result, ms } = await timed(() => paymasterRpc(app, client.clientId, request));
      expect(result.status).toBe(200);
      expect(result.body.error).toMatchObject({
        code: -32603,
        message: expect.stringMatching(/^paymaster_upstream_error/),
      });
      // The configured deadline ended the one wait on the signer (not the client's 5 s default, not a retry):
      // the api logs the exchange that ran out. The whole answer's time also holds the policy reads and
      // the usage row, which a loaded machine stretches, so its bound only says it did not hang.
      const signerFailures = loggedSince<{ detail?: string }>(
        app.logLines,
        linesBefore,
        'signing service failed',
      );
      expect(signerFailures.map((line) => line.detail)).toEqual([
        `no answer within ${DEADLINES.SIGNER_TIMEOUT_MS} ms`,
      ]);
      expect(ms).toBeGreaterThanOrEqual(DEADLINES.SIGNER_TIMEOUT_MS);
      expect(ms).toBeLessThan(DEADLINES.SIGNER_TIMEOUT_MS + 5_000);
      signer.kill('SIGCONT');
      resumed = true;
      expect(await readyBecomes(200, 5_000)).toBeLessThan(5_000);
    } finally {
      if (!resumed) signer.kill('SIGCONT');
    }
  }, 60_000);
});

/** The api's log lines with message `msg` written since line `from` (the logger writes one JSON object a line). */
function loggedSince<Fields>(logLines: readonly string[], from: number, msg: string): Fields[] {
  return logLines
    .slice(from)
    .map((line) => JSON.parse(line) as Fields & { msg?: string })
    .filter((line) => line.msg === msg);
}

async function until(check: () => Promise<boolean>, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
