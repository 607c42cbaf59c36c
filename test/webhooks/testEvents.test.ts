import { createSessionEventActivities } from '../../activities/sessionEvents';
import type { Db } from '../../db/client';
import { verifyWebhook } from '../../webhooks/verifyWebhook';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { startTestApp, type TestApp } from '../harness/app';
import { startTestWorkers, type TestWorkers } from '../harness/workers';
import { createConfirmingSession } from './fixtures';
import {
  arrivalsAt as arrivalsAtPath,
  merchantWithEndpoint as endpointAtReceiver,
  waitForArrivalsAt,
} from './apiEndpoints';
import { startWebhookReceiver, type WebhookReceiver } from './receiver';
import { webhookDeliveryStarterFor } from '../../workflowClient/webhookDeliveries';

/**
 * `POST …/webhooks/{id}/send-test-event` (issue 48) on both route sets, on the Temporal dev server with
 * the project's workers: a signed `endpoint.test` event with a fixed body, delivered through the
 * delivery workflow to that endpoint only and recorded among its deliveries; its attempts never count
 * toward disabling the endpoint; another merchant's endpoint answers 404.
 */
const DAY_MS = 24 * 3600_000;

describe('webhook test events', () => {
  let app: TestApp;
  let workers: TestWorkers;
  let receiver: WebhookReceiver;
  let db: Db;

  beforeAll(async () => {
    workers = await startTestWorkers({
      webhooks: { secrets: createWebhookSecretBox(developmentWebhookSecretKey()), allowPrivateTargets: true },
    });
    db = workers.db;
    app = await startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: workers.prefix });
    receiver = await startWebhookReceiver((request) =>
      request.path.startsWith('/failing') ? { status: 500, body: 'down' } : { status: 200, body: 'ok' },
    );
  });

  afterAll(async () => {
    await receiver?.close();
    await app?.close();
    await workers?.stop();
  });

  const merchantWithEndpoint = (path: string) => endpointAtReceiver(app, receiver, path);

  const arrivalsAt = (path: string) => arrivalsAtPath(receiver, path);
  const waitForArrivals = (path: string, count: number) => waitForArrivalsAt(receiver, path, count);

  /** The endpoint's delivery once its first attempt is recorded, read through the API. */
  async function recordedDelivery(listPath: string, headers: Record<string, string>, deliveryId: string) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const listed = await app.request(listPath, { headers });
      expect({ status: listed.status, body: listed.status === 200 ? 'ok' : listed.body }).toEqual({
        status: 200,
        body: 'ok',
      });
      const delivery = listed.body.data.find((entry: { id: string }) => entry.id === deliveryId);
      // attemptCount moves with the status in one transaction; the attempts are read by a second query.
      if (delivery?.attemptCount > 0 && delivery.attempts.length > 0) return delivery;
      if (Date.now() > deadline) throw new Error(`delivery ${deliveryId} has no recorded attempt`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('sends a signed endpoint.test event with a fixed body to that endpoint only, recorded as a delivery (SK route)', async () => {
    const { merchant, sk, endpointId, secret } = await merchantWithEndpoint('/test-sk');
    // A second endpoint of the same merchant: the test is not for it.
    const other = await app.request('/v1/webhooks', {
      method: 'POST',
      headers: sk,
      json: { url: `${receiver.baseUrl}/test-sk-other`, events: ['session.confirming', 'endpoint.disabled'] },
    });
    expect(other.status).toBe(201);

    const sent = await app.request(`/v1/webhooks/${endpointId}/send-test-event`, {
      method: 'POST',
      headers: sk,
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({
      eventId: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
      deliveryId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });

    const [arrived] = await waitForArrivals('/test-sk', 1);
    expect(arrived!.headers['x-service-event-id']).toBe(sent.body.eventId);
    const verified = verifyWebhook(
      arrived!.rawBody,
      arrived!.headers['x-service-signature'] as string,
      secret,
    );
    expect(verified).toEqual({
      id: sent.body.eventId,
      type: 'endpoint.test',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        endpoint: { id: endpointId, url: `${receiver.baseUrl}/test-sk` },
        message: 'A test event you asked for: no session or payment is behind it.',
      },
    });
    // Its keys in the fixed order, as every event body.
    expect(Object.keys(JSON.parse(arrived!.rawBody))).toEqual(['id', 'type', 'createdAt', 'data']);

    const delivery = await recordedDelivery(
      `/v1/merchants/me/webhooks/${endpointId}/deliveries`,
      merchant.auth,
      sent.body.deliveryId,
    );
    expect(delivery).toMatchObject({
      eventId: sent.body.eventId,
      eventType: 'endpoint.test',
      status: 'succeeded',
      attemptCount: 1,
      resendOf: null,
    });
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ attemptNumber: 1, outcome: 'succeeded', statusCode: 200, error: null }),
    ]);
    const stored = await db
      .selectFrom('events')
      .select(['type', 'endpoint_id', 'session_id', 'payload'])
      .where('id', '=', sent.body.eventId)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({
      type: 'endpoint.test',
      endpoint_id: endpointId,
      session_id: null,
      payload: arrived!.rawBody,
    });
    expect(arrivalsAt('/test-sk-other')).toEqual([]);
    const otherDeliveries = await app.request(`/v1/webhooks/${other.body.id}/deliveries`, { headers: sk });
    expect(otherDeliveries.body.total).toBe(0);

    // Deleting the endpoint deletes its test events with its delivery history.
    expect((await app.request(`/v1/webhooks/${endpointId}`, { method: 'DELETE', headers: sk })).status).toBe(
      204,
    );
    expect(
      await db.selectFrom('events').select('id').where('id', '=', sent.body.eventId).executeTakeFirst(),
    ).toBeUndefined();
  });

  it('the dashboard route sends one too; a test of an endpoint listing every type is still the only one it gets', async () => {
    const { merchant, endpointId, secret } = await merchantWithEndpoint('/test-jwt');
    const patched = await app.request(`/v1/merchants/me/webhooks/${endpointId}`, {
      method: 'PATCH',
      headers: merchant.auth,
      json: {
        events: [
          'session.confirming',
          'session.completed',
          'session.expired',
          'session.underpaid',
          'session.failed',
          'endpoint.disabled',
        ],
      },
    });
    expect(patched.status).toBe(200);
    const sent = await app.request(`/v1/merchants/me/webhooks/${endpointId}/send-test-event`, {
      method: 'POST',
      headers: merchant.auth,
    });
    expect(sent.status).toBe(202);
    const [arrived] = await waitForArrivals('/test-jwt', 1);
    const event = verifyWebhook(arrived!.rawBody, arrived!.headers['x-service-signature'] as string, secret);
    expect(event).toMatchObject({ id: sent.body.eventId, type: 'endpoint.test' });
    // An endpoint cannot subscribe to endpoint.test: it is sent on request only.
    const refused = await app.request(`/v1/merchants/me/webhooks/${endpointId}`, {
      method: 'PATCH',
      headers: merchant.auth,
      json: { events: ['endpoint.test'] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(
      /^Validation failed: events\.0: must be one of: session\.confirming, /,
    );
  });

  it('never counts toward disabling the endpoint: a failing test neither disables an endpoint 6 days into failing nor starts a run, a succeeding one does not end it; recovery leaves tests out', async () => {
    const { merchant, sk, endpointId } = await merchantWithEndpoint('/failing-test');
    const endpointRow = () =>
      db
        .selectFrom('webhook_endpoints')
        .select(['enabled', 'failing_since', 'disabled_reason'])
        .where('id', '=', endpointId)
        .executeTakeFirstOrThrow();
    const since = new Date(Date.now() - 1000).toISOString();

    // A failing test on a healthy endpoint starts no run of failures.
    const first = await app.request(`/v1/webhooks/${endpointId}/send-test-event`, {
      method: 'POST',
      headers: sk,
    });
    expect(first.status).toBe(202);
    const failed = await recordedDelivery(`/v1/webhooks/${endpointId}/deliveries`, sk, first.body.deliveryId);
    expect(failed.attempts[0]).toMatchObject({ outcome: 'http_error', statusCode: 500 });
    expect(failed.nextAttemptAt).not.toBeNull();
    expect(await endpointRow()).toEqual({ enabled: true, failing_since: null, disabled_reason: null });

    // Six days into a run of failures, one more real failure disables the endpoint; a test's does not.
    const failingSince = new Date(Date.now() - 6 * DAY_MS);
    await db
      .updateTable('webhook_endpoints')
      .set({ failing_since: failingSince })
      .where('id', '=', endpointId)
      .execute();
    const second = await app.request(`/v1/webhooks/${endpointId}/send-test-event`, {
      method: 'POST',
      headers: sk,
    });
    expect(second.status).toBe(202);
    await recordedDelivery(`/v1/webhooks/${endpointId}/deliveries`, sk, second.body.deliveryId);
    expect(await endpointRow()).toEqual({
      enabled: true,
      failing_since: failingSince,
      disabled_reason: null,
    });

    // A test that succeeds (the endpoint moved to a path that answers) does not end the run either.
    const moved = await app.request(`/v1/webhooks/${endpointId}`, {
      method: 'PATCH',
      headers: sk,
      json: { url: `${receiver.baseUrl}/recovered-test` },
    });
    expect(moved.status).toBe(200);
    const third = await app.request(`/v1/webhooks/${endpointId}/send-test-event`, {
      method: 'POST',
      headers: sk,
    });
    expect(third.status).toBe(202);
    const succeeded = await recordedDelivery(
      `/v1/webhooks/${endpointId}/deliveries`,
      sk,
      third.body.deliveryId,
    );
    expect(succeeded.status).toBe('succeeded');
    expect(await endpointRow()).toEqual({
      enabled: true,
      failing_since: failingSince,
      disabled_reason: null,
    });

    // Recovery sends again the events the endpoint missed; a failed test is not one of them.
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null })
      .where('id', 'in', [first.body.deliveryId, second.body.deliveryId])
      .execute();
    const recovered = await app.request(`/v1/merchants/me/webhooks/${endpointId}/recover`, {
      method: 'POST',
      headers: merchant.auth,
      json: { since },
    });
    expect(recovered.status).toBe(202);
    expect(recovered.body).toEqual({ queued: 0 });

    // And a real event's failure at this point does disable it: the run the tests left alone is real.
    await app.request(`/v1/webhooks/${endpointId}`, {
      method: 'PATCH',
      headers: sk,
      json: { url: `${receiver.baseUrl}/failing-real` },
    });
    const session = await createConfirmingSession(db, merchant.merchantId);
    const events = createSessionEventActivities({
      db,
      startWebhookDelivery: webhookDeliveryStarterFor(workers.client, workers.taskQueues.webhooks),
    });
    const event = await events.recordSessionConfirmingEvent({ sessionId: session.id });
    await events.startWebhookDeliveries({ eventId: event.id });
    await waitForArrivals('/failing-real', 1);
    const deadline = Date.now() + 30_000;
    while ((await endpointRow()).enabled) {
      if (Date.now() > deadline) throw new Error('the real failure did not disable the endpoint');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await endpointRow()).toMatchObject({ enabled: false, disabled_reason: 'failing' });
  });

  it('answers 404 for another merchant’s or an unknown endpoint on both route sets, a malformed id too, and 409 while disabled; nothing is stored', async () => {
    const owner = await merchantWithEndpoint('/test-owner');
    const intruder = await merchantWithEndpoint('/test-intruder');
    const eventsOfOwner = () =>
      db.selectFrom('events').select('id').where('merchant_id', '=', owner.merchant.merchantId).execute();
    for (const [path, headers] of [
      [`/v1/webhooks/${owner.endpointId}/send-test-event`, intruder.sk],
      [`/v1/merchants/me/webhooks/${owner.endpointId}/send-test-event`, intruder.merchant.auth],
      ['/v1/webhooks/00000000-0000-4000-8000-000000000000/send-test-event', owner.sk],
    ] as const) {
      const refused = await app.request(path, { method: 'POST', headers });
      expect(refused.status).toBe(404);
      expect(refused.body).toEqual({
        statusCode: 404,
        message: 'Webhook endpoint not found',
        error: 'Not Found',
      });
    }
    const malformed = await app.request('/v1/webhooks/not-a-uuid/send-test-event', {
      method: 'POST',
      headers: owner.sk,
    });
    expect(malformed.status).toBe(404);

    await app.request(`/v1/webhooks/${owner.endpointId}`, {
      method: 'PATCH',
      headers: owner.sk,
      json: { enabled: false },
    });
    const disabled = await app.request(`/v1/webhooks/${owner.endpointId}/send-test-event`, {
      method: 'POST',
      headers: owner.sk,
    });
    expect(disabled.status).toBe(409);
    expect(disabled.body.message).toBe('The webhook endpoint is disabled; enable it first');
    expect(await eventsOfOwner()).toEqual([]);
    expect(arrivalsAt('/test-owner')).toEqual([]);
  });
});
