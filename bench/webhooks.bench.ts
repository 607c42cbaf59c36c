import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { sql } from 'kysely';
import { createDb, type Db } from '../db/client';
import { insertSessionEventOnce } from '../db/events';
import { upsertMerchantByWallet } from '../db/merchants';
import { migrateToLatest } from '../db/migrate';
import { insertSessionWithOptions, recordSessionDeposit } from '../db/sessions';
import { insertWebhookEndpointWithinLimit } from '../db/webhooks';
import { ensureDatabase, startEmbeddedPostgres } from '../dev/services/postgres';
import { startTemporalDevServer } from '../dev/services/temporal';
import { startWebhookDelivery } from '../workflowClient/webhookDeliveries';
import { WEBHOOK_ATTEMPT_TIMEOUT_MS, WEBHOOK_RESPONSE_BODY_LIMIT_BYTES } from '../webhooks/deliveryPolicy';
import { newEventId, serialiseSessionConfirmingEvent } from '../webhooks/events';
import { sendWebhook } from '../webhooks/sendWebhook';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhookPayload } from '../webhooks/signWebhookPayload';
import { createWebhookSecretBox, generateWebhookSecret } from '../webhooks/webhookSecrets';
import { createWorkers, redactingProviderUrls, WORKER_TUNING } from '../workers/createWorkers';
import { createEngineBaselineActivities } from './engineBaseline/activities';
import { engineBaselineWorkflow } from './engineBaseline/workflows';
import { percentile, summariseLatencies } from './lib/percentiles';
import { machineLoad } from './lib/rounds';
import { taskQueueNames } from '../workflows/taskQueues';
import { reportBenchmark } from './lib/results';
import {
  changeSessionStatus,
  LIFECYCLE_EVENT_TYPES,
  seedLifecycleSession,
  type LifecycleEventType,
} from './lifecycleEventSeeds';

/**
 * Webhook deliveries per second through the delivery workflows (start → worker → signed POST →
 * delivery and attempt recorded, session marked) against the engine-only baseline: the same number of
 * bare workflow starts, each running one activity that makes a plain signed POST to the same receiver,
 * on the same Temporal server under the same worker settings (workers/createWorkers.ts WORKER_TUNING).
 * Rounds alternate (one discarded warm-up each first) so a burst of other work hits both alike. A plain
 * POST loop with no workflow is kept as information. Then the latency from the event (its stored
 * created_at) to its first attempt's answer (attempted_at + latency_ms), p99, with events arriving
 * open-loop at a steady rate as the session workflows produce them. Starts its own Postgres and Temporal.
 */
const DELIVERIES = 200;
const ROUNDS = 3;
/**
 * The latency phase: events arriving at half the delivery rate the rounds measured (at most 25/s), each
 * stored and its delivery started at once: the latency of a loaded but not saturated pipeline (above
 * its capacity a queue grows and any latency can be had).
 */
const PACED_EVENTS = 200;
const PACED_MAX_PER_SEC = 25;
/** Lifecycle events of each type (completed, expired, underpaid, failed) in the per-type latency phase. */
const LIFECYCLE_PER_TYPE = 50;

/** A receiver in its own process (the load generator must not share its event loop): 200 to everything. */
const RECEIVER_SOURCE = `
const server = require('node:http').createServer((request, response) => {
  request.resume();
  request.on('end', () => { response.writeHead(200, { 'content-type': 'text/plain' }); response.end('ok'); });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('LISTENING ' + server.address().port + '\\n'));
process.once('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

async function startReceiver(): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['-e', RECEIVER_SOURCE], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /LISTENING (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`receiver exited with ${code} before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))),
  };
}

/** A merchant and one endpoint at the receiver. */
async function seedEndpoint(
  db: Db,
  secrets: ReturnType<typeof createWebhookSecretBox>,
  url: string,
  events: string[] = ['session.confirming'],
) {
  const wallet = `0x${randomBytes(20).toString('hex')}`;
  const merchant = await upsertMerchantByWallet(db, { walletAddress: wallet, payoutAddress: wallet });
  const endpointId = randomUUID();
  const secret = generateWebhookSecret();
  const endpoint = await insertWebhookEndpointWithinLimit(
    db,
    {
      id: endpointId,
      merchantId: merchant.id,
      url,
      description: null,
      events,
      enabled: true,
      secretCiphertext: secrets.seal(secret, endpointId),
    },
    5,
  );
  if (endpoint === 'limit_reached') throw new Error('unexpected endpoint limit');
  return { merchantId: merchant.id, wallet, endpointId, secret };
}

type Endpoint = Awaited<ReturnType<typeof seedEndpoint>>;
type ConfirmingSession = NonNullable<Awaited<ReturnType<typeof recordSessionDeposit>>>;

/** `count` confirming sessions of the endpoint's merchant (their events are stored later, when due). */
async function seedSessions(db: Db, endpoint: Endpoint, count: number): Promise<ConfirmingSession[]> {
  const sessions: ConfirmingSession[] = [];
  for (let index = 0; index < count; index++) {
    const sessionId = randomUUID();
    await insertSessionWithOptions(
      db,
      {
        id: sessionId,
        merchant_id: endpoint.merchantId,
        amount: '19.99',
        merchant_name: 'Bench Shop',
        line_items: '[]',
        payment_option_symbols: ['USDC'],
        sandbox_mode: true,
        success_url: null,
        payout_address: endpoint.wallet,
        expires_at: new Date(Date.now() + 3600_000),
      },
      [],
    );
    sessions.push(
      (await recordSessionDeposit(db, {
        id: sessionId,
        txHash: `0x${randomBytes(32).toString('hex')}`,
        chainId: 84532,
        paidAt: new Date(),
      }))!,
    );
  }
  return sessions;
}

/** The session's `session.confirming` event, stored now (created_at is the moment the event exists). */
async function storeEvent(db: Db, endpoint: Endpoint, session: ConfirmingSession) {
  const id = newEventId(randomUUID());
  const createdAt = new Date();
  const payload = serialiseSessionConfirmingEvent({
    id,
    type: 'session.confirming',
    createdAt: createdAt.toISOString(),
    data: {
      session: {
        id: session.id,
        merchantName: session.merchant_name,
        amount: '19.99',
        status: 'confirming',
        expiresAt: session.expires_at.toISOString(),
        createdAt: session.created_at.toISOString(),
        paidAt: session.paid_at!.toISOString(),
        txHash: session.tx_hash!,
      },
    },
  });
  await insertSessionEventOnce(db, {
    id,
    type: 'session.confirming',
    merchantId: endpoint.merchantId,
    sessionId: session.id,
    payload,
    createdAt,
  });
  return { id, payload };
}

/** Counts the endpoint's rows and checks them against what the bench started: one succeeded delivery, one attempt, one marked session each. */
async function checkRows(db: Db, endpointId: string, expected: number) {
  const [deliveries, attempts, marked] = await Promise.all([
    db
      .selectFrom('webhook_deliveries')
      .where('endpoint_id', '=', endpointId)
      .select((eb) => [
        eb.fn.countAll<string>().as('all'),
        eb.fn.count<string>(sql`case when status = 'succeeded' then 1 end`).as('succeeded'),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('webhook_delivery_attempts as attempt')
      .innerJoin('webhook_deliveries as delivery', 'delivery.id', 'attempt.delivery_id')
      .where('delivery.endpoint_id', '=', endpointId)
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('sessions')
      .innerJoin('events', 'events.session_id', 'sessions.id')
      .innerJoin('webhook_deliveries as delivery', 'delivery.event_id', 'events.id')
      .where('delivery.endpoint_id', '=', endpointId)
      .where('sessions.webhook_delivered', '=', true)
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow(),
  ]);
  const figures = {
    deliveries: Number(deliveries.all),
    succeeded: Number(deliveries.succeeded),
    attempts: Number(attempts.count),
    sessionsMarked: Number(marked.count),
  };
  if (Object.values(figures).some((value) => value !== expected))
    throw new Error(`rows do not match the ${expected} deliveries counted: ${JSON.stringify(figures)}`);
  return figures;
}

/** Event stored → first attempt answered (attempted_at + latency_ms), ms, for every delivery of the endpoint. */
async function firstAttemptLatencies(db: Db, endpointId: string): Promise<number[]> {
  const rows = await db
    .selectFrom('webhook_delivery_attempts as attempt')
    .innerJoin('webhook_deliveries as delivery', 'delivery.id', 'attempt.delivery_id')
    .innerJoin('events', 'events.id', 'delivery.event_id')
    .where('delivery.endpoint_id', '=', endpointId)
    .where('attempt.attempt_number', '=', 1)
    .select(['attempt.attempted_at', 'attempt.latency_ms', 'events.created_at'])
    .execute();
  return rows.map((row) => row.attempted_at.getTime() + row.latency_ms - row.created_at.getTime());
}

/** firstAttemptLatencies per event type. */
async function firstAttemptLatenciesByType(db: Db, endpointId: string): Promise<Map<string, number[]>> {
  const rows = await db
    .selectFrom('webhook_delivery_attempts as attempt')
    .innerJoin('webhook_deliveries as delivery', 'delivery.id', 'attempt.delivery_id')
    .innerJoin('events', 'events.id', 'delivery.event_id')
    .where('delivery.endpoint_id', '=', endpointId)
    .where('attempt.attempt_number', '=', 1)
    .select(['attempt.attempted_at', 'attempt.latency_ms', 'events.created_at', 'events.type'])
    .execute();
  const byType = new Map<string, number[]>();
  for (const row of rows)
    byType.set(row.type, [
      ...(byType.get(row.type) ?? []),
      row.attempted_at.getTime() + row.latency_ms - row.created_at.getTime(),
    ]);
  return byType;
}

async function waitForSucceeded(db: Db, endpointId: string, expected: number): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    const { count } = await db
      .selectFrom('webhook_deliveries')
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'succeeded')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    if (Number(count) >= expected) return;
    if (Date.now() > deadline)
      throw new Error(`only ${count} of ${expected} deliveries succeeded in 5 minutes`);
    await delay(20);
  }
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const workDir = await mkdtemp(join(tmpdir(), 'stablepay-bench-webhooks-'));
  await chmod(workDir, 0o755);
  const cleanups: (() => Promise<unknown>)[] = [() => rm(workDir, { recursive: true, force: true })];
  try {
    const [postgres, temporal, receiver] = await Promise.all([
      startEmbeddedPostgres({ dataDir: join(workDir, 'postgres'), persistent: false }),
      startTemporalDevServer({ silent: true }),
      startReceiver(),
    ]);
    cleanups.unshift(
      () => postgres.stop(),
      () => temporal.stop(),
      () => receiver.stop(),
    );
    const db = createDb({
      connectionString: await ensureDatabase(postgres.adminUrl, 'webhooks_bench'),
      maxConnections: 10,
    });
    // pg's pool resolves end() before every socket is gone; a server stopping meanwhile kills the process.
    cleanups.unshift(() => db.destroy().then(() => delay(500)));
    await migrateToLatest(db);

    const secrets = createWebhookSecretBox(randomBytes(32));
    const taskQueues = taskQueueNames('bench-');
    const clientConnection = await Connection.connect({ address: temporal.address });
    cleanups.unshift(() => clientConnection.close());
    const client = new Client({ connection: clientConnection, namespace: temporal.namespace });
    const workerConnection = await NativeConnection.connect({ address: temporal.address });
    cleanups.unshift(() => workerConnection.close());
    const workers = await createWorkers({
      connection: workerConnection,
      namespace: temporal.namespace,
      dependencies: { db, temporal: client, webhooks: { secrets, allowPrivateTargets: true } },
      taskQueues,
    });
    const running = workers.run();
    cleanups.unshift(async () => {
      await workers.shutdown();
      await running;
    });

    // The engine-only baseline: its own worker (same settings) on its own queue, one activity per workflow.
    let baselineAnswers = 0;
    let baselineFailures = 0;
    const baselineEndpoint = await seedEndpoint(db, secrets, receiver.url);
    const baselineQueue = `bench-engine-baseline-${randomUUID()}`;
    const baselineWorker = await Worker.create({
      connection: workerConnection,
      namespace: temporal.namespace,
      taskQueue: baselineQueue,
      workflowsPath: require.resolve('./engineBaseline/workflows'),
      activities: createEngineBaselineActivities({
        url: receiver.url,
        secret: baselineEndpoint.secret,
        onAnswer: (succeeded) => {
          baselineAnswers += 1;
          if (!succeeded) baselineFailures += 1;
        },
      }),
      interceptors: { activity: [redactingProviderUrls] },
      ...WORKER_TUNING,
    });
    const baselineRunning = baselineWorker.run();
    cleanups.unshift(async () => {
      baselineWorker.shutdown();
      await baselineRunning;
    });

    /** One engine-only round: DELIVERIES bare workflows started at once, done when every POST was answered. */
    const engineRound = async () => {
      const events = [];
      for (let index = 0; index < DELIVERIES; index++)
        events.push({ eventId: newEventId(randomUUID()), payload: `{"n":${index}}` });
      const answeredBefore = baselineAnswers;
      const started = performance.now();
      await Promise.all(
        events.map((event) =>
          client.workflow.start(engineBaselineWorkflow, {
            workflowId: `engine-baseline-${event.eventId}`,
            taskQueue: baselineQueue,
            args: [event],
          }),
        ),
      );
      const deadline = Date.now() + 5 * 60_000;
      while (baselineAnswers - answeredBefore < DELIVERIES) {
        if (Date.now() > deadline) throw new Error('engine-only baseline did not finish in 5 minutes');
        await delay(20);
      }
      const seconds = (performance.now() - started) / 1000;
      if (baselineAnswers - answeredBefore !== DELIVERIES)
        throw new Error(`${baselineAnswers - answeredBefore} baseline POSTs answered, not ${DELIVERIES}`);
      return { seconds, perSec: DELIVERIES / seconds };
    };

    /** One subject round: a fresh endpoint, DELIVERIES events stored, their delivery workflows started at once. */
    const subjectRound = async () => {
      const endpoint = await seedEndpoint(db, secrets, receiver.url);
      const sessions = await seedSessions(db, endpoint, DELIVERIES);
      const events = [];
      for (const session of sessions) events.push(await storeEvent(db, endpoint, session));
      const started = performance.now();
      await Promise.all(
        events.map((event) =>
          startWebhookDelivery(client, {
            eventId: event.id,
            endpointId: endpoint.endpointId,
            taskQueue: taskQueues.webhooks,
          }),
        ),
      );
      await waitForSucceeded(db, endpoint.endpointId, DELIVERIES);
      const seconds = (performance.now() - started) / 1000;
      const rows = await checkRows(db, endpoint.endpointId, DELIVERIES);
      return { seconds, perSec: DELIVERIES / seconds, rows };
    };

    const loadAtStart = machineLoad();
    await engineRound();
    await subjectRound();
    const engineRounds: Awaited<ReturnType<typeof engineRound>>[] = [];
    const subjectRounds: Awaited<ReturnType<typeof subjectRound>>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      engineRounds.push(await engineRound());
      subjectRounds.push(await subjectRound());
    }
    if (baselineFailures > 0) throw new Error(`${baselineFailures} baseline POSTs were not answered 2xx`);

    // Information: the same signed bodies POSTed one after another by the same sender, no workflow.
    const loopEndpoint = await seedEndpoint(db, secrets, receiver.url);
    const loopStarted = performance.now();
    let loopFailures = 0;
    for (let index = 0; index < DELIVERIES; index++) {
      const payload = `{"n":${index}}`;
      const eventId = newEventId(randomUUID());
      const { header } = signWebhookPayload({ rawBody: payload, secret: loopEndpoint.secret });
      const result = await sendWebhook({
        url: receiver.url,
        rawBody: payload,
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: header,
          [EVENT_ID_HEADER]: eventId,
        },
        allowPrivateTargets: true,
        timeoutMs: WEBHOOK_ATTEMPT_TIMEOUT_MS,
        responseBodyLimitBytes: WEBHOOK_RESPONSE_BODY_LIMIT_BYTES,
      });
      if (result.outcome !== 'succeeded') loopFailures += 1;
    }
    const loopSec = (performance.now() - loopStarted) / 1000;

    // Latency: events arriving open-loop, each stored and its delivery started at once (as the session workflow does).
    const pacedEndpoint = await seedEndpoint(db, secrets, receiver.url);
    const pacedSessions = await seedSessions(db, pacedEndpoint, PACED_EVENTS);
    const pacedPerSec = Math.min(
      PACED_MAX_PER_SEC,
      subjectRounds.reduce((total, round) => total + round.perSec, 0) / subjectRounds.length / 2,
    );
    const PACED_INTERVAL_MS = 1000 / pacedPerSec;
    const pacedStarted = performance.now();
    await Promise.all(
      pacedSessions.map(async (session, index) => {
        await delay(Math.max(0, pacedStarted + index * PACED_INTERVAL_MS - performance.now()));
        const event = await storeEvent(db, pacedEndpoint, session);
        await startWebhookDelivery(client, {
          eventId: event.id,
          endpointId: pacedEndpoint.endpointId,
          taskQueue: taskQueues.webhooks,
        });
      }),
    );
    await waitForSucceeded(db, pacedEndpoint.endpointId, PACED_EVENTS);
    const pacedRows = await checkRows(db, pacedEndpoint.endpointId, PACED_EVENTS);
    const pacedLatencies = await firstAttemptLatencies(db, pacedEndpoint.endpointId);

    // The lifecycle events at the same pace, each made by its real status change (created_at = the change).
    const lifecycleEndpoint = await seedEndpoint(db, secrets, receiver.url, [...LIFECYCLE_EVENT_TYPES]);
    const lifecycleSessions: { id: string; type: LifecycleEventType }[] = [];
    for (let index = 0; index < LIFECYCLE_PER_TYPE * LIFECYCLE_EVENT_TYPES.length; index++) {
      const type = LIFECYCLE_EVENT_TYPES[index % LIFECYCLE_EVENT_TYPES.length]!;
      const merchant = { merchantId: lifecycleEndpoint.merchantId, wallet: lifecycleEndpoint.wallet };
      lifecycleSessions.push({ id: await seedLifecycleSession(db, { ...merchant, type }), type });
    }
    const lifecycleStarted = performance.now();
    await Promise.all(
      lifecycleSessions.map(async (session, index) => {
        await delay(Math.max(0, lifecycleStarted + index * PACED_INTERVAL_MS - performance.now()));
        const eventId = await changeSessionStatus(db, session.id, session.type);
        await startWebhookDelivery(client, {
          eventId,
          endpointId: lifecycleEndpoint.endpointId,
          taskQueue: taskQueues.webhooks,
        });
      }),
    );
    await waitForSucceeded(db, lifecycleEndpoint.endpointId, lifecycleSessions.length);
    const lifecycleLatencies = await firstAttemptLatenciesByType(db, lifecycleEndpoint.endpointId);
    const lifecycleByType = LIFECYCLE_EVENT_TYPES.map((type) => {
      const latencies = lifecycleLatencies.get(type) ?? [];
      if (latencies.length !== LIFECYCLE_PER_TYPE)
        throw new Error(`${latencies.length} first attempts of ${type}, not ${LIFECYCLE_PER_TYPE}`);
      return { type, ...summariseLatencies(latencies), p99Ms: percentile(latencies, 99) };
    });
    const loadAtEnd = machineLoad();

    const mean = (values: number[]) => values.reduce((total, value) => total + value, 0) / values.length;
    const enginePerSec = mean(engineRounds.map((round) => round.perSec));
    const subjectPerSec = mean(subjectRounds.map((round) => round.perSec));
    const latency = { ...summariseLatencies(pacedLatencies), p99Ms: percentile(pacedLatencies, 99) };
    const ratio = subjectPerSec / enginePerSec;
    const loopPerSec = DELIVERIES / loopSec;
    reportBenchmark('webhooks', {
      deliveries: DELIVERIES,
      rounds: ROUNDS,
      machine: { atStart: loadAtStart, atEnd: loadAtEnd },
      baseline: {
        what: 'engine-only: bare workflows on the same server and worker settings, one activity each (signed POST to the same receiver), nothing recorded',
        perSec: enginePerSec,
        rounds: engineRounds,
      },
      subject: {
        what: 'delivery workflows: start, worker, signed POST, delivery + attempt + session recorded',
        perSec: subjectPerSec,
        rounds: subjectRounds,
      },
      plainPostLoop: {
        what: 'information: signed POSTs from a tight sequential loop (sendWebhook), no workflow',
        seconds: loopSec,
        perSec: loopPerSec,
        failures: loopFailures,
      },
      firstAttemptLatencyByLifecycleEvent: {
        what: `status change (the event's created_at, same transaction) → first attempt answered, ${LIFECYCLE_PER_TYPE} events of each type interleaved, one every ${PACED_INTERVAL_MS.toFixed(0)} ms`,
        byType: lifecycleByType,
      },
      firstAttemptLatency: {
        what: `event stored (created_at) → first attempt answered (attempted_at + latency_ms), ${PACED_EVENTS} events one every ${PACED_INTERVAL_MS.toFixed(0)} ms (half the measured delivery rate, at most ${PACED_MAX_PER_SEC}/s)`,
        ...latency,
        rows: pacedRows,
      },
      ratios: {
        deliveriesVsEngineOnly: ratio,
        deliveriesVsPlainPostLoop: subjectPerSec / loopPerSec,
        firstAttemptP99Ms: latency.p99Ms,
      },
      goals: [
        {
          label: 'webhook deliveries/s vs engine-only (bare workflow + one activity each)',
          now: ratio,
          goal: { atLeast: 0.5 },
          subject: `${subjectPerSec.toFixed(1)} deliveries/s`,
          baseline: `${enginePerSec.toFixed(1)} workflows/s (engine-only); plain POST loop ${loopPerSec.toFixed(0)}/s`,
        },
        {
          label: 'webhook first attempt after the event, p99 (ms)',
          now: latency.p99Ms,
          goal: { atMost: 1000 },
          subject: `p50 ${latency.p50Ms.toFixed(0)} ms, p99 ${latency.p99Ms.toFixed(0)} ms at ${pacedPerSec.toFixed(1)} events/s`,
          baseline: "the event's created_at",
        },
        ...lifecycleByType.map((row) => ({
          label: `webhook first attempt after the status change, ${row.type}, p99 (ms)`,
          now: row.p99Ms,
          goal: { atMost: 1000 },
          subject: `p50 ${row.p50Ms.toFixed(0)} ms, p99 ${row.p99Ms.toFixed(0)} ms at ${pacedPerSec.toFixed(1)} events/s (all types)`,
          baseline: "the status change (the event's created_at)",
        })),
      ],
    });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
