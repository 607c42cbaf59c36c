import { createSessionEventActivities } from '../../activities/sessionEvents';
import type { Client } from '@temporalio/client';
import type { Db } from '../../db/client';
import { verifyWebhook, WebhookVerificationError } from '../../webhooks/verifyWebhook';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { startTestApp, type TestApp } from '../harness/app';
import type { SignedInMerchant } from '../harness/merchants';
import { startTestWorkers, type TestWorkers } from '../harness/workers';
import { createConfirmingSession } from './fixtures';
import { merchantWithEndpoint as endpointAtReceiver, waitForArrivalsAt } from './apiEndpoints';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from './receiver';
import { webhookDeliveryStarterFor } from '../../workflowClient/webhookDeliveries';

/**
 * docs/decisions.md "Webhook delivery operations" on the Temporal dev server with the project's workers, through the API's two route
 * sets: secret rotation with overlap, resending one delivery, recovering failures since a time, and
 * the deliveries list on both sets.
 */
describe('webhook delivery operations (docs/decisions.md "Webhook delivery operations")', () => {
  let app: TestApp;
  let workers: TestWorkers;
  let receiver: WebhookReceiver;
  let db: Db;
  let client: Client;

  beforeAll(async () => {
    workers = await startTestWorkers({
      webhooks: { secrets: createWebhookSecretBox(developmentWebhookSecretKey()), allowPrivateTargets: true },
    });
    ({ db, client } = workers);
    app = await startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: workers.prefix });
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    await receiver?.close();
    await app?.close();
    await workers?.stop();
  });

  const merchantWithEndpoint = (path: string) => endpointAtReceiver(app, receiver, path);

  /** A deposit seen on a new session of the merchant: its session.confirming event goes to the endpoints. */
  async function confirmingEvent(merchant: SignedInMerchant): Promise<string> {
    const session = await createConfirmingSession(db, merchant.merchantId);
    const events = createSessionEventActivities({
      db,
      startWebhookDelivery: webhookDeliveryStarterFor(client, workers.taskQueues.webhooks),
    });
    const event = await events.recordSessionConfirmingEvent({ sessionId: session.id });
    await events.startWebhookDeliveries({ eventId: event.id });
    return event.id;
  }

  const waitForArrivals = (path: string, count: number) => waitForArrivalsAt(receiver, path, count);

  const verifiesWith = (request: ReceivedWebhook, secret: string) => {
    try {
      verifyWebhook(request.rawBody, request.headers['x-service-signature'] as string, secret);
      return true;
    } catch (error) {
      if (error instanceof WebhookVerificationError) return false;
      throw error;
    }
  };

  it('rotation with overlap: a receiver holding only the old secret and one holding only the new both verify every delivery; after the overlap only the new one does', async () => {
    const { merchant, sk, endpointId, secret: oldSecret } = await merchantWithEndpoint('/rotate-overlap');
    const rotated = await app.request(`/v1/webhooks/${endpointId}/rotate-secret`, {
      method: 'POST',
      headers: sk,
      json: { overlapSeconds: 3600 },
    });
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(3590_000);

    await confirmingEvent(merchant);
    const [during] = await waitForArrivals('/rotate-overlap', 1);
    expect(during!.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifiesWith(during!, oldSecret)).toBe(true);
    expect(verifiesWith(during!, newSecret)).toBe(true);

    // The overlap ends (as an hour passing would leave the row).
    await db
      .updateTable('webhook_endpoints')
      .set({ previous_secret_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', endpointId)
      .execute();
    await confirmingEvent(merchant);
    const [, after] = await waitForArrivals('/rotate-overlap', 2);
    expect(after!.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifiesWith(after!, newSecret)).toBe(true);
    expect(verifiesWith(after!, oldSecret)).toBe(false);
  });

  it('rotation without overlap (overlapSeconds 0, dashboard route) stops the old secret at once; a bad overlap answers 400', async () => {
    const { merchant, endpointId, secret: oldSecret } = await merchantWithEndpoint('/rotate-now');
    const base = `/v1/merchants/me/webhooks/${endpointId}/rotate-secret`;
    for (const overlapSeconds of [-1, 604_801, 1.5, '60']) {
      const refused = await app.request(base, {
        method: 'POST',
        headers: merchant.auth,
        json: { overlapSeconds },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe(
        'Validation failed: overlapSeconds: must be an integer from 0 to 604800',
      );
    }
    const rotated = await app.request(base, {
      method: 'POST',
      headers: merchant.auth,
      json: { overlapSeconds: 0 },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.previousSecretExpiresAt).toBeNull();
    await confirmingEvent(merchant);
    const [request] = await waitForArrivals('/rotate-now', 1);
    expect(verifiesWith(request!, rotated.body.secret)).toBe(true);
    expect(verifiesWith(request!, oldSecret)).toBe(false);
  });

  it('a rotation with no body keeps the old secret signing for a day (the default overlap)', async () => {
    const { sk, endpointId } = await merchantWithEndpoint('/rotate-default');
    const rotated = await app.request(`/v1/webhooks/${endpointId}/rotate-secret`, {
      method: 'POST',
      headers: sk,
    });
    expect(rotated.status).toBe(200);
    const overlapMs = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(overlapMs).toBeGreaterThan(86_390_000);
    expect(overlapMs).toBeLessThanOrEqual(86_400_000);
  });

  it('resend: a new delivery of the same event (same evt_ id, fresh signature), listed on both route sets with its attempts', async () => {
    const { merchant, sk, endpointId, secret } = await merchantWithEndpoint('/resend');
    const eventId = await confirmingEvent(merchant);
    await waitForArrivals('/resend', 1);
    const listed = await app.request(`/v1/webhooks/${endpointId}/deliveries`, { headers: sk });
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(1);
    const original = listed.body.data[0];
    expect(original).toMatchObject({ eventId, eventType: 'session.confirming', resendOf: null });

    const resent = await app.request(`/v1/webhooks/${endpointId}/deliveries/${original.id}/resend`, {
      method: 'POST',
      headers: sk,
    });
    expect(resent.status).toBe(202);
    expect(resent.body).toEqual({ deliveryId: expect.any(String) });
    const [first, second] = await waitForArrivals('/resend', 2);
    expect(second!.headers['x-service-event-id']).toBe(eventId);
    expect(second!.rawBody).toBe(first!.rawBody);
    expect(verifiesWith(second!, secret)).toBe(true);

    // The dashboard set lists the same deliveries: the resend, newest first, says what it re-sends.
    let deliveries: { id: string; status: string; resendOf: string | null; attempts: unknown[] }[] = [];
    for (let tries = 0; tries < 100; tries += 1) {
      deliveries = (
        await app.request(`/v1/merchants/me/webhooks/${endpointId}/deliveries`, { headers: merchant.auth })
      ).body.data;
      if (deliveries.every((delivery) => delivery.status === 'succeeded')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(deliveries.map((delivery) => delivery.id).sort()).toEqual(
      [original.id, resent.body.deliveryId].sort(),
    );
    const resend = deliveries.find((delivery) => delivery.id === resent.body.deliveryId)!;
    expect(resend).toMatchObject({ status: 'succeeded', resendOf: original.id });
    expect(resend.attempts).toEqual([
      expect.objectContaining({ attemptNumber: 1, outcome: 'succeeded', statusCode: 200, error: null }),
    ]);
  });

  it('resend answers 404 for another endpoint’s or another merchant’s delivery, and 409 while the endpoint is disabled', async () => {
    const owner = await merchantWithEndpoint('/resend-owner');
    await confirmingEvent(owner.merchant);
    await waitForArrivals('/resend-owner', 1);
    const [delivery] = (
      await app.request(`/v1/webhooks/${owner.endpointId}/deliveries`, { headers: owner.sk })
    ).body.data;
    const intruder = await merchantWithEndpoint('/resend-intruder');
    for (const path of [
      `/v1/webhooks/${owner.endpointId}/deliveries/${delivery.id}/resend`,
      `/v1/webhooks/${intruder.endpointId}/deliveries/${delivery.id}/resend`,
    ]) {
      const refused = await app.request(path, { method: 'POST', headers: intruder.sk });
      expect(refused.status).toBe(404);
    }
    await app.request(`/v1/webhooks/${owner.endpointId}`, {
      method: 'PATCH',
      headers: owner.sk,
      json: { enabled: false },
    });
    const disabled = await app.request(`/v1/webhooks/${owner.endpointId}/deliveries/${delivery.id}/resend`, {
      method: 'POST',
      headers: owner.sk,
    });
    expect(disabled.status).toBe(409);
    expect(disabled.body.message).toBe('The webhook endpoint is disabled; enable it first');
  });

  it('recover: one new delivery for each event whose deliveries all failed since the time; delivered events are left alone', async () => {
    const { merchant, sk, endpointId } = await merchantWithEndpoint('/recover');
    const since = new Date(Date.now() - 1000).toISOString();
    receiver.setBehaviour((request) =>
      request.path === '/recover' ? { status: 500 } : { status: 200, body: 'ok' },
    );
    const failing = [await confirmingEvent(merchant), await confirmingEvent(merchant)];
    await waitForArrivals('/recover', 2);
    receiver.setBehaviour(() => ({ status: 200, body: 'ok' }));
    const delivered = await confirmingEvent(merchant);
    await waitForArrivals('/recover', 3);
    // The failing deliveries are given up (as after their fifth attempt) so they count as failed.
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null })
      .where('endpoint_id', '=', endpointId)
      .where('event_id', 'in', failing)
      .execute();
    for (const [body, message] of [
      [{}, 'Validation failed: since: must be an ISO 8601 timestamp'],
      [{ since: 'yesterday' }, 'Validation failed: since: must be an ISO 8601 timestamp'],
      [
        { since: new Date(Date.now() - 15 * 86_400_000).toISOString() },
        'Validation failed: since: must be at most 14 days back',
      ],
      [
        { since: new Date(Date.now() + 60_000).toISOString() },
        'Validation failed: since: must not be in the future',
      ],
    ] as const) {
      const refused = await app.request(`/v1/webhooks/${endpointId}/recover`, {
        method: 'POST',
        headers: sk,
        json: body,
      });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe(message);
    }

    const recovered = await app.request(`/v1/merchants/me/webhooks/${endpointId}/recover`, {
      method: 'POST',
      headers: merchant.auth,
      json: { since },
    });
    expect(recovered.status).toBe(202);
    expect(recovered.body).toEqual({ queued: 2 });
    const arrivals = await waitForArrivals('/recover', 5);
    const resentIds = arrivals.slice(3).map((request) => request.headers['x-service-event-id']);
    expect(resentIds.sort()).toEqual([...failing].sort());
    expect(resentIds).not.toContain(delivered);
  });
});
