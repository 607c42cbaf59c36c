import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { setTimeout as delay } from 'node:timers/promises';
import { createDb, type Db } from '../../db/client';
import { verifyWebhook } from '../../webhooks/verifyWebhook';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { createWorkers, type TemporalWorkers } from '../../workers/createWorkers';
import { sessionWorkflowId } from '../../workflows/workflowIds';
import { taskQueueNames } from '../../workflows/taskQueues';
import { depositDetectedSignal } from '../../workflows/paymentSession';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';
import { startWebhookReceiver, type WebhookReceiver } from './receiver';

/**
 * The whole path on the Temporal dev server: POST /v1/sessions starts the session workflow, a
 * deposit signal moves it to confirming, the event is stored and delivered, signed, to the
 * merchant's endpoint, and the public status view turns webhookDelivered.
 */
describe('session.confirming end to end (dev server, the project worker, the API)', () => {
  const prefix = `e2e${randomBytes(4).toString('hex')}-`;
  let app: TestApp;
  let db: Db;
  let clientConnection: Connection;
  let client: Client;
  let workerConnection: NativeConnection;
  let workers: TemporalWorkers;
  let running: Promise<void>;
  let receiver: WebhookReceiver;
  let merchant: SignedInMerchant;
  let sk: { authorization: string };

  beforeAll(async () => {
    quietTemporalRuntime();
    const stack = testStack();
    db = createDb({ connectionString: stack.databaseUrl, maxConnections: 5 });
    clientConnection = await Connection.connect({ address: stack.temporalAddress });
    client = new Client({ connection: clientConnection, namespace: stack.temporalNamespace });
    workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
    workers = await createWorkers({
      connection: workerConnection,
      namespace: stack.temporalNamespace,
      dependencies: {
        db,
        temporal: client,
        webhooks: {
          secrets: createWebhookSecretBox(developmentWebhookSecretKey()),
          allowPrivateTargets: true,
        },
      },
      taskQueues: taskQueueNames(prefix),
    });
    running = workers.run();
    app = await startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: prefix });
    receiver = await startWebhookReceiver();
    merchant = await signInNewMerchant(app);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
  });

  afterAll(async () => {
    await receiver?.close();
    await app?.close();
    await workers?.shutdown();
    await running;
    await workerConnection?.close();
    await clientConnection?.close();
    await db?.destroy();
  });

  async function statusOf(sessionId: string): Promise<{ status: string; webhookDelivered: boolean }> {
    return (await app.request(`/v1/sessions/${sessionId}/status`)).body;
  }

  it('delivers a correctly signed session.confirming whose body is exactly SPEC’s, and the status view shows webhookDelivered', async () => {
    const endpoint = await app.request('/v1/webhooks', {
      method: 'POST',
      headers: sk,
      json: { url: `${receiver.baseUrl}/hooks/stablepay` },
    });
    expect(endpoint.status).toBe(201);
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '19.99', merchantName: 'Tea Shop', sandboxMode: true },
    });
    expect(created.status).toBe(201);
    const sessionId: string = created.body.id;
    expect(await statusOf(sessionId)).toEqual({ status: 'awaiting_payment', webhookDelivered: false });

    const txHash = `0x${randomBytes(32).toString('hex')}`;
    await client.workflow.getHandle(sessionWorkflowId(sessionId)).signal(depositDetectedSignal, {
      chainId: 84532,
      token: '0x0000000000000000000000000000000000000001',
      amount: '19990000',
      txHash,
      blockNumber: '7',
    });

    const [request] = await receiver.waitFor(1, 30_000);
    expect(request!.path).toBe('/hooks/stablepay');
    expect(request!.headers['content-type']).toBe('application/json');
    const signature = request!.headers['x-service-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const event = verifyWebhook<Record<string, unknown>>(request!.rawBody, signature, endpoint.body.secret);

    const summary = (await app.request(`/v1/merchants/me/sessions/${sessionId}`, { headers: merchant.auth }))
      .body;
    expect(event).toEqual({
      id: request!.headers['x-service-event-id'],
      type: 'session.confirming',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        session: {
          id: sessionId,
          merchantName: 'Tea Shop',
          amount: '19.99',
          status: 'confirming',
          expiresAt: created.body.expiresAt,
          createdAt: created.body.createdAt,
          paidAt: summary.paidAt,
          txHash,
        },
      },
    });
    expect(event.id).toMatch(/^evt_[0-9a-f-]{36}$/);
    // Field order on the wire is SPEC's order, too.
    expect(Object.keys(event)).toEqual(['id', 'type', 'createdAt', 'data']);
    expect(Object.keys((event.data as { session: object }).session)).toEqual([
      'id',
      'merchantName',
      'amount',
      'status',
      'expiresAt',
      'createdAt',
      'paidAt',
      'txHash',
    ]);

    let view = await statusOf(sessionId);
    for (let tries = 0; tries < 100 && !view.webhookDelivered; tries++) {
      await delay(100);
      view = await statusOf(sessionId);
    }
    expect(view).toEqual({ status: 'confirming', webhookDelivered: true });

    // The dashboard sees the delivery and its attempt.
    const deliveries = await app.request(`/v1/merchants/me/webhooks/${endpoint.body.id}/deliveries`, {
      headers: merchant.auth,
    });
    expect(deliveries.body).toMatchObject({
      total: 1,
      data: [
        {
          eventId: event.id,
          status: 'succeeded',
          attempts: [{ attemptNumber: 1, outcome: 'succeeded', statusCode: 200 }],
        },
      ],
    });

    // retry-webhook re-sends the same event (same id, same bytes), freshly signed, on both routes.
    const retried = await app.request(`/v1/sessions/${sessionId}/retry-webhook`, {
      method: 'POST',
      headers: sk,
    });
    expect(retried.status).toBe(202);
    expect(retried.body).toEqual({ eventId: event.id, endpointIds: [endpoint.body.id] });
    await receiver.waitFor(2, 30_000);
    // Re-dispatches that arrive before a send has started are answered by that one send; this one comes after.
    const viaDashboard = await app.request(`/v1/merchants/me/sessions/${sessionId}/retry-webhook`, {
      method: 'POST',
      headers: merchant.auth,
    });
    expect(viaDashboard.status).toBe(202);
    const again = await receiver.waitFor(3, 30_000);
    for (const resent of again.slice(1)) {
      expect(resent.headers['x-service-event-id']).toBe(event.id);
      expect(resent.rawBody).toBe(request!.rawBody);
      expect(
        verifyWebhook(resent.rawBody, resent.headers['x-service-signature'] as string, endpoint.body.secret),
      ).toEqual(event);
    }
  });
});
