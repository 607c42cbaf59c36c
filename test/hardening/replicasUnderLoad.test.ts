import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { createDb, type Db } from '../../db/client';
import { taskQueueNames } from '../../workflows/taskQueues';
import type { TestApp } from '../harness/app';
import { apiProcessEnv } from '../harness/apiProcessEnv';
import { startApiReplicas, type ApiReplicas } from '../harness/apiReplicas';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { ProjectProcess, requestAt } from '../harness/projectProcess';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../harness/stack';
import {
  CHAIN_ID,
  expectLoadInvariants,
  percent,
  SENDER_HOURLY_OPS,
  SteadyLoad,
  TARGET,
  type Tally,
} from '../harness/steadyLoad';
import { allowContract, createPaymasterClient } from '../paymaster/paymasterApi';
import { startWebhookReceiver, type WebhookReceiver } from '../webhooks/receiver';

/**
 * More than one api and worker under load (issue 31): two api replicas behind HAProxy (the rules of
 * `npm start` with API_REPLICAS=2) and two workers carry the fault test's steady load (session creations,
 * pm_getPaymasterData, deposits with webhook deliveries) while both api replicas restart one after the
 * other (no request may fail), one api replica is SIGKILLed (at most its requests in flight fail; the
 * rate is printed) and one worker is SIGKILLed (nothing lost or doubled). Afterwards the invariants of
 * the fault test hold.
 */
type Window = Record<'sessions' | 'paymaster' | 'deposits', Tally>;

describe('two api replicas behind HAProxy and two workers, under load', () => {
  const prefix = `rl${randomBytes(3).toString('hex')}-`;
  let service: ApiReplicas;
  let workers: ProjectProcess[] = [];
  let db: Db;
  let temporalConnection: Connection;
  let temporalClient: Client;
  let receiver: WebhookReceiver;
  let merchant: SignedInMerchant;
  let load: SteadyLoad;
  const figures: { fault: string; seconds: number; window: Window }[] = [];

  const call: TestApp['request'] = (path, init) => requestAt(service.url, path, init, 45_000);

  beforeAll(async () => {
    const stack = testStack();
    db = createDb({ connectionString: stack.databaseUrl, maxConnections: 3 });
    temporalConnection = await Connection.connect({ address: stack.temporalAddress });
    temporalClient = new Client({ connection: temporalConnection, namespace: stack.temporalNamespace });
    const workerEnv = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.temporalNamespace,
      TEMPORAL_TASK_QUEUE_PREFIX: prefix,
      DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      ...Object.fromEntries(stack.chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
    };
    workers = [
      new ProjectProcess('workers/main.ts', workerEnv),
      new ProjectProcess('workers/main.ts', workerEnv),
    ];
    for (const worker of workers) worker.start();
    service = await startApiReplicas(
      2,
      await apiProcessEnv({
        TEMPORAL_TASK_QUEUE_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        API_DRAIN_MS: '3000',
        API_STOP_DEADLINE_MS: '15000',
      }),
    );
    await Promise.all(workers.map((worker) => worker.waitForOutput(/worker polling/, 180_000)));

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
  }, 300_000);

  afterAll(async () => {
    await load?.stop();
    await service?.stop();
    await Promise.all(workers.map((worker) => worker.kill('SIGTERM')));
    await receiver?.close();
    await temporalConnection?.close();
    await db?.destroy();
  }, 90_000);

  /** A few seconds of load, the fault, a few seconds of recovery; records and prints the window. */
  async function underLoad(fault: string, inflict: () => Promise<void>): Promise<Window> {
    const started = performance.now();
    load.start();
    await delay(3_000);
    await inflict();
    await delay(3_000);
    const window = await load.stop();
    const seconds = (performance.now() - started) / 1000;
    figures.push({ fault, seconds, window });
    process.stdout.write(
      `fault "${fault}" over ${seconds.toFixed(0)} s: sessions ${percent(window.sessions)}, ` +
        `paymaster ${percent(window.paymaster)}, deposits ${percent(window.deposits)} failed; failures: ` +
        `${JSON.stringify(Object.fromEntries(Object.entries(window).map(([kind, tally]) => [kind, tally.reasons])))}\n`,
    );
    for (const tally of Object.values(window)) expect(tally.sent - tally.failed).toBeGreaterThan(0);
    return window;
  }

  it('a rolling restart of both api replicas, one after the other, fails no request', async () => {
    const window = await underLoad('rolling restart of both api replicas', async () => {
      for (const replica of service.replicas) {
        const mark = service.balancerLogMark();
        await replica.process.kill('SIGTERM');
        expect(replica.process.child!.exitCode).toBe(0);
        await replica.restart();
        // The next replica stops only once the balancer routes to this one again.
        await service.untilTakenBack(replica, mark);
      }
    });
    for (const tally of Object.values(window)) expect(tally.failed).toBe(0);
  }, 240_000);

  it('SIGKILL of one api replica fails at most the requests in flight on it', async () => {
    const window = await underLoad('SIGKILL one api replica', async () => {
      const replica = service.replicas[0]!;
      const mark = service.balancerLogMark();
      await replica.process.kill('SIGKILL');
      await delay(5_000);
      await replica.restart();
      await service.untilTakenBack(replica, mark);
    });
    // Each of the three load loops has one request in flight at a time: at most one each on the killed replica.
    for (const tally of Object.values(window)) expect(tally.failed).toBeLessThanOrEqual(1);
  }, 240_000);

  it('SIGKILL of one worker loses and doubles nothing', async () => {
    const window = await underLoad('SIGKILL one worker', async () => {
      const worker = workers[0]!;
      await worker.kill('SIGKILL');
      await delay(3_000);
      worker.start();
      await worker.waitForOutput(/worker polling/, 180_000);
    });
    for (const tally of Object.values(window)) expect(tally.failed).toBe(0);
  }, 300_000);

  it('afterwards: every session has its workflow, every paid session one event and one delivery, usage exact', async () => {
    const { signedRows } = await expectLoadInvariants({
      db,
      temporalClient,
      sessionsTaskQueue: taskQueueNames(prefix).sessions,
      merchantId: merchant.merchantId,
      load,
      receiver,
      workerOutput: () => workers.map((worker) => worker.output.slice(-2000)).join('\n'),
    });
    // One delivery row per event (the endpoint's), however the killed worker's activities were retried.
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select('event_id')
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    expect(deliveries.length).toBe(new Set(deliveries.map((delivery) => delivery.event_id)).size);
    const received = receiver.received.map((request) => request.headers['x-service-event-id']);
    process.stdout.write(
      `replicas under load: ${load.accepted.length} sessions accepted, ${load.signalled.length} paid, ` +
        `${deliveries.length} deliveries (${received.length - new Set(received).size} repeated receptions), ` +
        `${load.paymasterSent} paymaster calls (${signedRows} signed)\n` +
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
