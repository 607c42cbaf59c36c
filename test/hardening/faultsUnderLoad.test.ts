import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { sql } from 'kysely';
import { encodeFunctionData, parseAbi, type Address } from 'viem';
import { createSessionReconcilerActivities } from '../../activities/sessionReconciler';
import { generateSigningJwk } from '../../api/auth/merchantTokens';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { createDb, type Db } from '../../db/client';
import { migrateToLatest } from '../../db/migrate';
import { findFreePort } from '../../dev/services/freePort';
import { ensureDatabase } from '../../dev/services/postgres';
import { startTemporalDevServer, type TemporalDevServer } from '../../dev/services/temporal';
import { sessionWorkflowId } from '../../workflows/workflowIds';
import { taskQueueNames } from '../../workflows/taskQueues';
import { depositDetectedSignal } from '../../workflows/paymentSession';
import type { TestApp, TestResponse } from '../harness/app';
import { startPrivatePostgres, type PrivatePostgres } from '../harness/embeddedPostgresProcess';
import { ProjectProcess, requestAt, until } from '../harness/projectProcess';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../harness/stack';
import { allowContract, createPaymasterClient } from '../paymaster/paymasterApi';
import { startWebhookReceiver, type WebhookReceiver } from '../webhooks/receiver';

/**
 * Faults under load (issue 14). A private world — its own Postgres, Temporal dev server, api and worker
 * processes, and an RPC proxy in front of the chain the paymaster prices on — carries a steady load of
 * session creations, paymaster `pm_getPaymasterData` calls and deposits (each deposit makes an event
 * that is delivered to a local webhook receiver) while, one after the other, Postgres restarts, the
 * Temporal server restarts, the api and the worker are SIGKILLed (and started again, as an orchestrator
 * would), and the chain RPC stops answering for 30 s. Each fault's error rate is printed (and kept in
 * docs/operations.md). Afterwards: every accepted session has its workflow, every event its delivery,
 * usage rows are neither lost nor duplicated, and no sender got more operations than its limit.
 */
const CHAIN_ID = 84532;
const TARGET: Address = '0x1000000000000000000000000000000000000001';
/** The merchant's per-sender hourly operation limit; each sender is asked OPS_PER_SENDER times. */
const SENDER_HOURLY_OPS = 3;
const OPS_PER_SENDER = 4;
const RPC_STALL_MS = 30_000;
const DEADLINES = {
  TEMPORAL_START_TIMEOUT_MS: '2000',
  DATABASE_ACQUIRE_TIMEOUT_MS: '2000',
  DATABASE_STATEMENT_TIMEOUT_MS: '3000',
  SIGNER_TIMEOUT_MS: '2000',
  READY_CHECK_TIMEOUT_MS: '1000',
};

/** An HTTP proxy in front of a JSON-RPC endpoint that can stop answering (requests wait) and resume. */
interface StallingRpcProxy {
  url: string;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

async function startStallingRpcProxy(upstream: string): Promise<StallingRpcProxy> {
  let stalled: Promise<void> | undefined;
  let release = () => undefined as void;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        // A stalled chain answers nothing; what waited is answered once it is back (late, as TCP would).
        while (stalled) await stalled;
        try {
          const answer = await fetch(upstream, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: Buffer.concat(chunks),
          });
          response.writeHead(answer.status, { 'content-type': 'application/json' });
          response.end(Buffer.from(await answer.arrayBuffer()));
        } catch {
          response.destroy();
        }
      })();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const resume = () => {
    stalled = undefined;
    release();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stall() {
      stalled ??= new Promise<void>((resolve) => (release = resolve));
    },
    resume,
    async close() {
      resume();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Tally {
  sent: number;
  failed: number;
  /** What the failures were, e.g. `HTTP 503` or `fetch failed`, with their counts. */
  reasons: Record<string, number>;
  /** The slowest answer (or failure) in the window. */
  maxMs: number;
}

/** `true` for a correct answer, the reason for a failed request, undefined for a request not made. */
type Outcome = true | string | undefined;

/**
 * The steady load: three loops (sessions, paymaster, deposits) each one request at a time, 100 ms apart.
 * A request that does not get its correct answer (a network error, a 5xx, a paymaster upstream or price
 * error, a signal that did not reach the workflow) counts as failed; a refusal by a sponsorship limit
 * (the sender's hourly operations, the merchant's share of the testnet budget, which a long run reaches)
 * is a correct answer.
 */
class SteadyLoad {
  readonly accepted: string[] = [];
  readonly signalled: string[] = [];
  private awaitingDeposit: string[] = [];
  /** Per sender: operations the paymaster answered with signed data, and requests sent. */
  readonly signedBySender = new Map<string, number>();
  readonly sentBySender = new Map<string, number>();
  paymasterSent = 0;
  private window: Record<'sessions' | 'paymaster' | 'deposits', Tally> = this.emptyWindow();
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly call: (path: string, init?: RequestInit & { json?: unknown }) => Promise<TestResponse>,
    private readonly sk: { authorization: string },
    private readonly clientId: string,
    private readonly temporal: () => Client,
  ) {}

  private emptyWindow() {
    return {
      sessions: { sent: 0, failed: 0, reasons: {}, maxMs: 0 },
      paymaster: { sent: 0, failed: 0, reasons: {}, maxMs: 0 },
      deposits: { sent: 0, failed: 0, reasons: {}, maxMs: 0 },
    };
  }

  start(): void {
    this.window = this.emptyWindow();
    this.running = true;
    this.loops = [
      this.loop(() => this.createSession(), this.window.sessions),
      this.loop(() => this.askPaymaster(), this.window.paymaster),
      this.loop(() => this.deposit(), this.window.deposits),
    ];
  }

  async stop(): Promise<Record<'sessions' | 'paymaster' | 'deposits', Tally>> {
    this.running = false;
    await Promise.all(this.loops);
    return this.window;
  }

  private async loop(attempt: () => Promise<Outcome>, tally: Tally): Promise<void> {
    while (this.running) {
      const started = performance.now();
      const outcome = await attempt().catch((error: unknown) =>
        error instanceof Error ? error.message.slice(0, 60) : String(error),
      );
      if (outcome !== undefined) {
        tally.sent += 1;
        tally.maxMs = Math.max(tally.maxMs, performance.now() - started);
        if (outcome !== true) {
          tally.failed += 1;
          tally.reasons[outcome] = (tally.reasons[outcome] ?? 0) + 1;
        }
      }
      await delay(100);
    }
  }

  private async createSession(): Promise<Outcome> {
    const response = await this.call('/v1/sessions', {
      method: 'POST',
      headers: this.sk,
      json: { amount: '5', sandboxMode: true },
    });
    if (response.status !== 201) return `HTTP ${response.status}`;
    this.accepted.push(response.body.id);
    this.awaitingDeposit.push(response.body.id);
    return true;
  }

  private async askPaymaster(): Promise<Outcome> {
    const number = this.paymasterSent++;
    const sender = `0x${(0xa0000 + Math.floor(number / OPS_PER_SENDER)).toString(16).padStart(40, '0')}`;
    this.sentBySender.set(sender, (this.sentBySender.get(sender) ?? 0) + 1);
    const response = await this.call('/v1/paymaster/rpc', {
      method: 'POST',
      headers: { 'x-client-id': this.clientId },
      json: {
        jsonrpc: '2.0',
        id: number,
        method: 'pm_getPaymasterData',
        params: [operation(sender, number), ENTRY_POINT_V07_ADDRESS, `0x${CHAIN_ID.toString(16)}`],
      },
    });
    if (response.status !== 200) return `HTTP ${response.status}`;
    if (response.body.result) {
      this.signedBySender.set(sender, (this.signedBySender.get(sender) ?? 0) + 1);
      return true;
    }
    const message: string = response.body.error?.message ?? 'no result';
    return /paymaster_(rate_limit|global_cap|spend_cap)_exceeded/.test(message) || message.slice(0, 60);
  }

  /** A deposit for the oldest accepted session not yet paid: the workflow turns confirming and emits its event. */
  private async deposit(): Promise<Outcome> {
    const sessionId = this.awaitingDeposit.shift();
    if (!sessionId) return undefined;
    try {
      await this.temporal()
        .workflow.getHandle(sessionWorkflowId(sessionId))
        .signal(depositDetectedSignal, {
          chainId: CHAIN_ID,
          token: '0x0000000000000000000000000000000000000001',
          amount: '5000000',
          txHash: `0x${randomBytes(32).toString('hex')}`,
          blockNumber: '7',
        });
      this.signalled.push(sessionId);
      return true;
    } catch (error) {
      // Pay it later. A session accepted while Temporal was away has no workflow until the reconciler
      // starts it: that is no failed request. Temporal not answering is.
      this.awaitingDeposit.push(sessionId);
      return error instanceof WorkflowNotFoundError ? undefined : `signal: ${(error as Error).name}`;
    }
  }
}

function operation(sender: string, nonce: number) {
  return {
    sender,
    nonce: `0x${nonce.toString(16)}`,
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
  };
}

describe('faults under load', () => {
  const prefix = `fl${randomBytes(3).toString('hex')}-`;
  let workDir: string;
  let postgres: PrivatePostgres;
  let postgresPort: number;
  let databaseUrl: string;
  let db: Db;
  let temporal: TemporalDevServer;
  let temporalPorts: { port: number; uiPort: number };
  let temporalConnection: Connection;
  let temporalClient: Client;
  let rpcProxy: StallingRpcProxy;
  let api: ProjectProcess;
  let worker: ProjectProcess;
  let apiUrl: string;
  let receiver: WebhookReceiver;
  let merchant: SignedInMerchant;
  let load: SteadyLoad;
  const figures: { fault: string; seconds: number; window: Awaited<ReturnType<SteadyLoad['stop']>> }[] = [];

  // Longer than any server-side deadline (the chain RPC's is 10 s with one retry): the answer is measured, not the wait.
  const call: TestApp['request'] = (path, init) => requestAt(apiUrl, path, init, 45_000);
  const apiReady = async () => (await call('/ready').catch(() => undefined))?.status === 200;
  const startTemporal = () =>
    startTemporalDevServer({ silent: true, dbFile: join(workDir, 'temporal.sqlite'), ...temporalPorts });

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'stablepay-faults-'));
    await chmod(workDir, 0o755);
    postgresPort = await findFreePort();
    postgres = await startPrivatePostgres(join(workDir, 'postgres'), {
      port: postgresPort,
      persistent: true,
    });
    databaseUrl = await ensureDatabase(postgres.adminUrl, 'stablepay_faults');
    db = createDb({ connectionString: databaseUrl, maxConnections: 3, onIdleError: () => undefined });
    await migrateToLatest(db);
    temporalPorts = { port: await findFreePort(), uiPort: await findFreePort() };
    temporal = await startTemporal();
    temporalConnection = await Connection.connect({ address: temporal.address });
    temporalClient = new Client({ connection: temporalConnection, namespace: temporal.namespace });

    const stack = testStack();
    const pricedChain = stack.chains.find((chain) => chain.chainId === CHAIN_ID)!;
    rpcProxy = await startStallingRpcProxy(pricedChain.rpcUrl);
    const rpcUrls = Object.fromEntries(
      stack.chains.map((chain) => [
        `RPC_URL_${chain.chainId}`,
        chain.chainId === CHAIN_ID ? rpcProxy.url : chain.rpcUrl,
      ]),
    );
    const common = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE_PREFIX: prefix,
      DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      ...rpcUrls,
      ...DEADLINES,
    };
    const apiPort = await findFreePort();
    apiUrl = `http://127.0.0.1:${apiPort}`;
    api = new ProjectProcess('api/main.ts', {
      ...common,
      PORT: String(apiPort),
      // One signing key across restarts: a merchant's token outlives an api process.
      JWT_PRIVATE_JWK: JSON.stringify(await generateSigningJwk('faults-key')),
      SIGNER_URL: stack.signer.url,
      SIGNER_SHARED_SECRET: stack.signer.sharedSecret,
      ...Object.fromEntries(stack.chains.map((chain) => [`BUNDLER_URL_${chain.chainId}`, chain.bundlerUrl])),
      SMTP_URL: stack.mail.smtpUrl,
    });
    worker = new ProjectProcess('workers/main.ts', common);
    api.start();
    worker.start();
    await until(apiReady, 90_000, () => api.output);
    await worker.waitForOutput(/worker polling/);

    receiver = await startWebhookReceiver();
    merchant = await signInNewMerchant({ request: call });
    const sk = { authorization: `Bearer ${await createApiKey({ request: call }, merchant)}` };
    const endpoint = await call('/v1/webhooks', {
      method: 'POST',
      headers: sk,
      json: { url: `${receiver.baseUrl}/hooks` },
    });
    expect(endpoint.status).toBe(201);
    const client = await createPaymasterClient({ request: call }, merchant, { allowedChainIds: [CHAIN_ID] });
    await allowContract({ request: call }, merchant, CHAIN_ID, TARGET);
    const limits = await call('/v1/paymaster/limits', {
      method: 'PATCH',
      headers: merchant.auth,
      json: { perSenderHourlyOps: SENDER_HOURLY_OPS },
    });
    expect(limits.status).toBe(200);
    load = new SteadyLoad(call, sk, client.clientId, () => temporalClient);
  }, 240_000);

  afterAll(async () => {
    await load?.stop();
    await api?.kill('SIGTERM');
    await worker?.kill('SIGTERM');
    await receiver?.close();
    await rpcProxy?.close();
    await temporalConnection?.close();
    await db?.destroy();
    await temporal?.stop();
    await postgres?.stop();
  }, 90_000);

  /** Runs the load for a few seconds, the fault and its repair, then a few seconds of recovery; records the error rates. */
  async function underLoad(fault: string, inflict: () => Promise<void>): Promise<void> {
    const started = performance.now();
    load.start();
    await delay(3_000);
    await inflict();
    await until(apiReady, 60_000, () => api.output);
    await delay(3_000);
    const window = await load.stop();
    const seconds = (performance.now() - started) / 1000;
    figures.push({ fault, seconds, window });
    const rate = ({ sent, failed, maxMs }: Tally) =>
      `${failed}/${sent} (${((100 * failed) / (sent || 1)).toFixed(1)} %, slowest ${(maxMs / 1000).toFixed(1)} s)`;
    process.stdout.write(
      `fault "${fault}" over ${seconds.toFixed(0)} s: sessions ${rate(window.sessions)}, ` +
        `paymaster ${rate(window.paymaster)}, deposits ${rate(window.deposits)} failed; failures: ` +
        `${JSON.stringify(Object.fromEntries(Object.entries(window).map(([kind, tally]) => [kind, tally.reasons])))}\n`,
    );
    // The load went on: each kind of request was answered correctly before and after the fault.
    for (const tally of Object.values(window)) expect(tally.sent - tally.failed).toBeGreaterThan(0);
  }

  it('restart Postgres', async () => {
    await underLoad('restart Postgres', async () => {
      await postgres.stop();
      postgres = await startPrivatePostgres(join(workDir, 'postgres'), {
        port: postgresPort,
        persistent: true,
      });
    });
  }, 120_000);

  it('restart the Temporal server', async () => {
    await underLoad('restart the Temporal server', async () => {
      await temporal.stop();
      temporal = await startTemporal();
    });
  }, 120_000);

  it('SIGKILL the api', async () => {
    await underLoad('SIGKILL the api', async () => {
      await api.kill();
      api.start();
    });
  }, 120_000);

  it('SIGKILL the worker', async () => {
    await underLoad('SIGKILL the worker', async () => {
      await worker.kill();
      await delay(2_000);
      worker.start();
      // A restarted worker bundles its workflows again: on a loaded machine that alone can take a minute.
      await worker.waitForOutput(/worker polling/, 150_000);
    });
  }, 200_000);

  it('stall the chain RPC for 30 s', async () => {
    await underLoad('stall the chain RPC for 30 s', async () => {
      rpcProxy.stall();
      await delay(RPC_STALL_MS);
      rpcProxy.resume();
    });
  }, 150_000);

  it('afterwards: every accepted session has its workflow, every event its delivery, usage exact, no limit overshoot', async () => {
    // The reconciler schedule's run: sessions accepted while Temporal was away get their workflows.
    const reconciler = createSessionReconcilerActivities({
      db,
      temporal: temporalClient,
      sessionsTaskQueue: taskQueueNames(prefix).sessions,
    });
    await reconciler.startMissingSessionWorkflows({ olderThanSec: 0 });
    // Every stored session, including those whose 201 the SIGKILL cut off, and every accepted one among them.
    const stored = (
      await db.selectFrom('sessions').select('id').where('merchant_id', '=', merchant.merchantId).execute()
    ).map((row) => row.id);
    expect(new Set(stored)).toEqual(new Set([...stored, ...load.accepted]));
    const missing: string[] = [];
    for (const id of stored) {
      await temporalClient.workflow
        .getHandle(sessionWorkflowId(id))
        .describe()
        .catch(() => missing.push(id));
    }
    expect(missing).toEqual([]);
    expect(load.accepted.length).toBeGreaterThan(50);

    // Every paid session has its one event, and every event its delivery, received by the endpoint.
    await until(
      async () => {
        const { count } = await db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<string>().as('count'))
          .where('merchant_id', '=', merchant.merchantId)
          .executeTakeFirstOrThrow();
        return Number(count) >= load.signalled.length;
      },
      120_000,
      () => worker.output,
    );
    const events = await db
      .selectFrom('events')
      .select(['id', 'session_id'])
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    expect(events.map((event) => event.session_id).sort()).toEqual([...load.signalled].sort());
    await until(
      async () => {
        const received = new Set(receiver.received.map((request) => request.headers['x-service-event-id']));
        return events.every((event) => received.has(event.id));
      },
      180_000,
      () => worker.output,
    );
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'status'])
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    expect(new Set(deliveries.map((delivery) => delivery.event_id)).size).toBe(events.length);

    // Usage: no more rows than requests sent, every signed answer has its row, no operation signed twice,
    // and no sender beyond its hourly operation limit, whatever the faults did.
    const rows = await db
      .selectFrom('paymaster_usage')
      .select(['sender', 'status', 'user_op_hash'])
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    expect(rows.length).toBeLessThanOrEqual(load.paymasterSent);
    const signedRows = rows.filter((row) => row.user_op_hash !== null);
    expect(new Set(signedRows.map((row) => row.user_op_hash)).size).toBe(signedRows.length);
    const signedRowsBySender = new Map<string, number>();
    for (const row of signedRows)
      signedRowsBySender.set(row.sender!, (signedRowsBySender.get(row.sender!) ?? 0) + 1);
    const lost = [...load.signedBySender].filter(
      ([sender, answered]) => (signedRowsBySender.get(sender) ?? 0) < answered,
    );
    expect(lost).toEqual([]);
    const overshoot = [...signedRowsBySender].filter(([, signed]) => signed > SENDER_HOURLY_OPS);
    expect(overshoot).toEqual([]);
    // The per-sender counters agree with the rows they guard.
    const counters = await sql<{ used: string }>`
      select used from paymaster_limit_counters where counter_key like ${`%${merchant.merchantId}%`}
        and counter_key like '%ops%'`.execute(db);
    for (const counter of counters.rows) expect(Number(counter.used)).toBeLessThanOrEqual(SENDER_HOURLY_OPS);

    process.stdout.write(
      `faults under load: ${load.accepted.length} sessions accepted, ${load.signalled.length} paid and delivered, ` +
        `${load.paymasterSent} paymaster calls (${signedRows.length} signed)\n` +
        figures
          .map(
            ({ fault, seconds, window }) =>
              `| ${fault} | ${seconds.toFixed(0)} s | ${percent(window.sessions)} | ${percent(window.paymaster)} | ${percent(window.deposits)} |`,
          )
          .join('\n') +
        '\n',
    );
  }, 360_000);
});

function percent({ sent, failed, maxMs }: Tally): string {
  return `${((100 * failed) / (sent || 1)).toFixed(1)} % (${failed}/${sent}), ${(maxMs / 1000).toFixed(1)} s`;
}
