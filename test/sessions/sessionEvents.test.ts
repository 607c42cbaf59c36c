import { createSessionEventActivities } from '../../activities/sessionEvents';
import { findEventById } from '../../db/events';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { startTestWorkers, type TestWorkers } from '../harness/workers';
import { createConfirmingSession } from '../webhooks/fixtures';
import { startWebhookReceiver, type WebhookReceiver } from '../webhooks/receiver';
import { webhookDeliveryStarterFor } from '../../workflowClient/webhookDeliveries';

/**
 * GET /v1/merchants/me/sessions/{id}/events: a session's events with their webhook deliveries and
 * attempts, delivered for real by the project's workers to a loopback receiver (one endpoint answers
 * 200, the other 500); merchant-scoped.
 */
describe('a session’s events with their webhook deliveries', () => {
  let app: TestApp;
  let workers: TestWorkers;
  let receiver: WebhookReceiver;
  let merchant: SignedInMerchant;
  let other: SignedInMerchant;

  beforeAll(async () => {
    workers = await startTestWorkers({
      webhooks: { secrets: createWebhookSecretBox(developmentWebhookSecretKey()), allowPrivateTargets: true },
    });
    app = await startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: workers.prefix });
    receiver = await startWebhookReceiver((request) =>
      request.path === '/failing'
        ? { status: 500, body: 'down for maintenance' }
        : { status: 200, body: 'ok' },
    );
    [merchant, other] = await Promise.all([signInNewMerchant(app), signInNewMerchant(app)]);
  });

  afterAll(async () => {
    await receiver?.close();
    await app?.close();
    await workers?.stop();
  });

  const eventsOf = (who: SignedInMerchant, sessionId: string) =>
    app.request(`/v1/merchants/me/sessions/${sessionId}/events`, { headers: who.auth });

  async function addEndpoint(path: string): Promise<{ id: string; url: string }> {
    const created = await app.request('/v1/merchants/me/webhooks', {
      method: 'POST',
      headers: merchant.auth,
      json: { url: `${receiver.baseUrl}${path}` },
    });
    expect(created.status).toBe(201);
    return { id: created.body.id, url: created.body.url };
  }

  it('lists the session.confirming event with a delivery to each endpoint, its attempts and outcome; another merchant gets 404', async () => {
    const [ok, failing] = [await addEndpoint('/ok'), await addEndpoint('/failing')];
    const session = await createConfirmingSession(workers.db, merchant.merchantId);

    // Before any event: an empty timeline, not an error.
    const before = await eventsOf(merchant, session.id);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ data: [] });

    const activities = createSessionEventActivities({
      db: workers.db,
      startWebhookDelivery: webhookDeliveryStarterFor(workers.client, workers.taskQueues.webhooks),
    });
    const event = await activities.recordSessionConfirmingEvent({ sessionId: session.id });
    await activities.startWebhookDeliveries({ eventId: event.id });
    await receiver.waitFor(2, 30_000);

    // Both first attempts recorded (the failing one is then waiting for its retry in a minute).
    for (let tries = 0; tries < 100; tries += 1) {
      const { body } = await eventsOf(merchant, session.id);
      const deliveries: { attempts: unknown[] }[] = body.data[0]?.deliveries ?? [];
      if (deliveries.length === 2 && deliveries.every((delivery) => delivery.attempts.length === 1)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const answer = await eventsOf(merchant, session.id);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toHaveLength(1);
    const [listed] = answer.body.data;
    expect(listed).toEqual({
      id: event.id,
      type: 'session.confirming',
      createdAt: (await findEventById(workers.db, event.id))!.created_at.toISOString(),
      deliveryCount: 2,
      deliveries: expect.any(Array),
    });
    const byEndpoint = Object.fromEntries(
      listed.deliveries.map((delivery: { endpointId: string }) => [delivery.endpointId, delivery]),
    );
    expect(byEndpoint[ok.id]).toMatchObject({
      eventId: event.id,
      eventType: 'session.confirming',
      endpointUrl: ok.url,
      status: 'succeeded',
      attemptCount: 1,
      nextAttemptAt: null,
      resendOf: null,
      attempts: [
        expect.objectContaining({
          attemptNumber: 1,
          outcome: 'succeeded',
          statusCode: 200,
          responseBody: 'ok',
        }),
      ],
    });
    expect(byEndpoint[failing.id]).toMatchObject({
      endpointUrl: failing.url,
      status: 'pending',
      attemptCount: 1,
      nextAttemptAt: expect.any(String),
      attempts: [
        expect.objectContaining({
          attemptNumber: 1,
          outcome: 'http_error',
          statusCode: 500,
          responseBody: 'down for maintenance',
        }),
      ],
    });

    // Merchant-scoped: the same session id under another merchant's token is unknown.
    const foreign = await eventsOf(other, session.id);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ statusCode: 404, message: 'Session not found', error: 'Not Found' });
  }, 60_000);

  it('answers 404 for an unknown session and for an id that is not a UUID (as the session routes do), 401 without a token', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', "1' or '1'='1"]) {
      const answer = await eventsOf(merchant, encodeURIComponent(id));
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ statusCode: 404, message: expect.any(String), error: 'Not Found' });
    }
    const anonymous = await app.request(
      '/v1/merchants/me/sessions/00000000-0000-4000-8000-000000000000/events',
    );
    expect(anonymous.status).toBe(401);
  });
});
