import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
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
import { createWorkers } from '../workers/createWorkers';
import { taskQueueNames } from '../workers/taskQueues';
import { reportBenchmark } from './lib/results';

/**
 * Webhook deliveries per second through the delivery workflows (start → worker → signed POST →
 * attempt and delivery recorded, session marked) against plain signed POSTs from a tight loop, both
 * to the same local receiver in its own process, in one run. Starts its own Postgres and Temporal.
 */
const DELIVERIES = 200;

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

/** A merchant, one endpoint at the receiver and `count` confirming sessions, each with its stored event. */
async function seed(db: Db, secrets: ReturnType<typeof createWebhookSecretBox>, url: string, count: number) {
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
      events: ['session.confirming'],
      enabled: true,
      secretCiphertext: secrets.seal(secret, endpointId),
    },
    5,
  );
  if (endpoint === 'limit_reached') throw new Error('unexpected endpoint limit');
  const events: { id: string; payload: string }[] = [];
  for (let index = 0; index < count; index++) {
    const sessionId = randomUUID();
    await insertSessionWithOptions(
      db,
      {
        id: sessionId,
        merchant_id: merchant.id,
        amount: '19.99',
        merchant_name: 'Bench Shop',
        line_items: '[]',
        payment_option_symbols: ['USDC'],
        sandbox_mode: true,
        success_url: null,
        payout_address: wallet,
        expires_at: new Date(Date.now() + 3600_000),
      },
      [],
    );
    const session = (await recordSessionDeposit(db, {
      id: sessionId,
      txHash: `0x${randomBytes(32).toString('hex')}`,
      chainId: 84532,
      paidAt: new Date(),
    }))!;
    const id = newEventId(randomUUID());
    const payload = serialiseSessionConfirmingEvent({
      id,
      type: 'session.confirming',
      createdAt: new Date().toISOString(),
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
      merchantId: merchant.id,
      sessionId,
      payload,
      createdAt: new Date(),
    });
    events.push({ id, payload });
  }
  return { endpointId, secret, events };
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

    // Baseline: the same signed bodies, POSTed one after another by the same sender, no workflow.
    const baselineSet = await seed(db, secrets, receiver.url, DELIVERIES);
    const baselineStarted = performance.now();
    let baselineFailures = 0;
    for (const event of baselineSet.events) {
      const { header } = signWebhookPayload({ rawBody: event.payload, secret: baselineSet.secret });
      const result = await sendWebhook({
        url: receiver.url,
        rawBody: event.payload,
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: header,
          [EVENT_ID_HEADER]: event.id,
        },
        allowPrivateTargets: true,
        timeoutMs: WEBHOOK_ATTEMPT_TIMEOUT_MS,
        responseBodyLimitBytes: WEBHOOK_RESPONSE_BODY_LIMIT_BYTES,
      });
      if (result.outcome !== 'succeeded') baselineFailures += 1;
    }
    const baselineSec = (performance.now() - baselineStarted) / 1000;

    // Subject: one delivery workflow per event, all started at once; done when every delivery is recorded succeeded.
    const subjectSet = await seed(db, secrets, receiver.url, DELIVERIES);
    const subjectStarted = performance.now();
    await Promise.all(
      subjectSet.events.map((event) =>
        startWebhookDelivery(client, {
          eventId: event.id,
          endpointId: subjectSet.endpointId,
          taskQueue: taskQueues.webhooks,
        }),
      ),
    );
    let succeeded = 0;
    const deadline = Date.now() + 5 * 60_000;
    while (succeeded < DELIVERIES) {
      if (Date.now() > deadline)
        throw new Error(`only ${succeeded} of ${DELIVERIES} deliveries succeeded in 5 minutes`);
      await delay(20);
      const { count } = await db
        .selectFrom('webhook_deliveries')
        .where('endpoint_id', '=', subjectSet.endpointId)
        .where('status', '=', 'succeeded')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow();
      succeeded = Number(count);
    }
    const subjectSec = (performance.now() - subjectStarted) / 1000;

    const baselinePerSec = DELIVERIES / baselineSec;
    const subjectPerSec = DELIVERIES / subjectSec;
    reportBenchmark('webhooks', {
      deliveries: DELIVERIES,
      baseline: {
        what: 'signed POSTs from a tight sequential loop (sendWebhook), no workflow',
        seconds: baselineSec,
        perSec: baselinePerSec,
        failures: baselineFailures,
      },
      subject: {
        what: 'delivery workflows on the Temporal dev server: start, worker, signed POST, attempt + delivery + session recorded',
        seconds: subjectSec,
        perSec: subjectPerSec,
      },
      ratios: { workflowDeliveriesVsTightLoopPosts: subjectPerSec / baselinePerSec },
    });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
