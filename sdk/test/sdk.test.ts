import { createSessionEventActivities } from '../../activities/sessionEvents';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { startTestApp, type TestApp } from '../../test/harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../../test/harness/merchants';
import { startTestWorkers, type TestWorkers } from '../../test/harness/workers';
import { createConfirmingSession } from '../../test/webhooks/fixtures';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/webhooks/receiver';
import {
  createStablePayClient,
  StablePayError,
  verifyWebhook,
  WebhookVerificationError,
  type StablePayClient,
  type WebhookEvent,
} from '../src';
import { webhookDeliveryStarterFor } from '../../workflowClient/webhookDeliveries';

/**
 * The SDK against the running app (test/harness/app.ts) and the project's workers: typed calls from the
 * contract, errors as StablePayError, a 429 retried after its Retry-After, the default Idempotency-Key
 * on POST and an explicit one replayed, and verifyWebhook on real deliveries, also while a secret
 * rotation overlaps.
 */
describe('the TypeScript SDK (sdk/)', () => {
  let app: TestApp;
  let workers: TestWorkers;
  let receiver: WebhookReceiver;
  let merchant: SignedInMerchant;
  let client: StablePayClient;

  beforeAll(async () => {
    workers = await startTestWorkers({
      webhooks: { secrets: createWebhookSecretBox(developmentWebhookSecretKey()), allowPrivateTargets: true },
    });
    app = await startTestApp({
      TEMPORAL_TASK_QUEUE_PREFIX: workers.prefix,
      // A small per-IP allowance for the public reads, so the retry test can reach it (1 request/s).
      RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: '60',
    });
    receiver = await startWebhookReceiver();
    merchant = await signInNewMerchant(app);
    client = createStablePayClient({
      baseUrl: app.baseUrl,
      apiKey: await createApiKey(app, merchant, 'sdk'),
    });
  });

  afterAll(async () => {
    await receiver?.close();
    await app?.close();
    await workers?.stop();
  });

  /** Each test reads from its own client IP (one trusted proxy hop), so the per-IP allowance is its own. */
  const fromIp = (ip: string) => ({ 'x-forwarded-for': ip });

  it('creates a session, reads it back and lists it, typed from the contract', async () => {
    const created = await client.createSession({
      amount: '12.5',
      sandboxMode: true,
      merchantName: 'SDK shop',
    });
    expect(created.status).toBe('awaiting_payment');
    expect(created.paymentUrl).toContain(`/pay/${created.id}`);

    const reader = createStablePayClient({ baseUrl: app.baseUrl, headers: fromIp('10.77.0.1') });
    const session = await reader.getSession(created.id);
    expect(session).toMatchObject({ id: created.id, amount: '12.5', merchantName: 'SDK shop' });
    const status = await reader.getSessionStatus(created.id);
    expect(status.status).toBe('awaiting_payment');

    const dashboard = createStablePayClient({ baseUrl: app.baseUrl, token: merchant.token });
    const listed = await dashboard.listSessions({ limit: 50 });
    expect(listed.data.map((row) => row.id)).toContain(created.id);
  });

  it('maps an error answer to a StablePayError with the status and the server’s message', async () => {
    const refused = await client.createSession({ amount: 'twelve' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StablePayError);
    expect((refused as StablePayError).status).toBe(400);
    expect((refused as StablePayError).message).toMatch(/amount/);
    expect((refused as StablePayError).errors).toEqual([{ field: 'amount', message: expect.any(String) }]);

    const unknown = await client
      .getSession('00000000-0000-4000-8000-000000000000')
      .catch((error: unknown) => error as StablePayError);
    expect(unknown).toBeInstanceOf(StablePayError);
    expect((unknown as StablePayError).status).toBe(404);
    expect((unknown as StablePayError).errors).toEqual([]);

    const noKey = createStablePayClient({ baseUrl: app.baseUrl, apiKey: 'sk_live_not_a_key' });
    await expect(noKey.listWebhookEndpoints()).rejects.toMatchObject({ name: 'StablePayError', status: 401 });
  });

  it('retries a 429 after the Retry-After it carries, within its bound', async () => {
    const { id } = await client.createSession({ amount: '1', sandboxMode: true });
    const headers = fromIp('10.77.0.2');
    const noRetries = createStablePayClient({ baseUrl: app.baseUrl, headers, maxRetries: 0 });
    // Spend the IP's allowance (a bucket of 60) until the api answers 429.
    const exhaust = async () => {
      let refused: StablePayError | undefined;
      for (let request = 0; request < 70 && !refused; request++)
        refused = await noRetries.getSessionStatus(id).then(
          () => undefined,
          (error: StablePayError) => error,
        );
      return refused;
    };
    const limited = await exhaust();
    expect(limited).toMatchObject({ status: 429 });
    expect(limited!.retryAfterSec).toBeGreaterThanOrEqual(1);

    const retries: { status: number; delayMs: number }[] = [];
    const retrying = createStablePayClient({
      baseUrl: app.baseUrl,
      headers,
      onRetry: ({ status, delayMs }) => retries.push({ status, delayMs }),
    });
    const startedAt = Date.now();
    const status = await retrying.getSessionStatus(id);
    expect(status.status).toBe('awaiting_payment');
    expect(retries[0]).toEqual({ status: 429, delayMs: limited!.retryAfterSec! * 1000 });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(retries[0]!.delayMs);

    // A Retry-After beyond maxDelayMs is not waited for: the caller gets the 429 at once. Spent again
    // first: the retry's wait let the bucket refill, and on a slow machine more than one token.
    expect(await exhaust()).toMatchObject({ status: 429 });
    await expect(
      createStablePayClient({ baseUrl: app.baseUrl, headers, maxDelayMs: 0 }).getSessionStatus(id),
    ).rejects.toMatchObject({ status: 429 });
  });

  it('sends an Idempotency-Key on every POST by default, and an explicit key replays the first answer', async () => {
    const first = await client.createSession({ amount: '3', sandboxMode: true });
    const stored = await app.db
      .selectFrom('idempotency_keys')
      .select(['key', 'scope'])
      .where('merchant_id', '=', merchant.merchantId)
      .where('scope', '=', 'sessions.create')
      .execute();
    // The default key is a fresh UUID per call, recorded with the session it created.
    expect(stored.length).toBeGreaterThanOrEqual(1);
    expect(stored.map((row) => row.key).every((key) => /^[0-9a-f-]{36}$/.test(key))).toBe(true);

    const idempotencyKey = `order-${first.id}`;
    const once = await client.createSession({ amount: '4', sandboxMode: true }, { idempotencyKey });
    const again = await client.createSession({ amount: '4', sandboxMode: true }, { idempotencyKey });
    expect(again).toEqual(once);
    const sessions = await app.db
      .selectFrom('sessions')
      .select('id')
      .where('merchant_id', '=', merchant.merchantId)
      .where('amount', '=', '4')
      .execute();
    expect(sessions.map((row) => row.id)).toEqual([once.id]);
    await expect(
      client.createSession({ amount: '5', sandboxMode: true }, { idempotencyKey }),
    ).rejects.toMatchObject({
      status: 409,
    });
  });

  it('verifyWebhook accepts a real delivery, and during a rotation overlap either secret (or both) passes', async () => {
    const endpoint = await client.createWebhookEndpoint({ url: `${receiver.baseUrl}/sdk` });
    const oldSecret = endpoint.secret;

    const session = await createConfirmingSession(workers.db, merchant.merchantId);
    const events = createSessionEventActivities({
      db: workers.db,
      startWebhookDelivery: webhookDeliveryStarterFor(workers.client, workers.taskQueues.webhooks),
    });
    const event = await events.recordSessionConfirmingEvent({ sessionId: session.id });
    await events.startWebhookDeliveries({ eventId: event.id });
    const [delivered] = await receiver.waitFor(1, 30_000);
    const verified: WebhookEvent = verifyWebhook(
      delivered!.rawBody,
      delivered!.headers['x-service-signature'] as string,
      oldSecret,
    );
    expect(verified.type).toBe('session.confirming');
    // The union narrows by `type` (checked by the type check): only session.completed has a settlement.
    const sharesOf = (event: WebhookEvent) =>
      event.type === 'session.completed' ? event.data.settlement.shares : undefined;
    expect(sharesOf(verified)).toBeUndefined();
    if (verified.type === 'session.confirming') expect(verified.data.session.id).toBe(session.id);
    expect(() =>
      verifyWebhook(delivered!.rawBody, delivered!.headers['x-service-signature'] as string, 'whsec_wrong'),
    ).toThrow(WebhookVerificationError);
    // A replay outside the tolerance window is refused.
    expect(() =>
      verifyWebhook(delivered!.rawBody, delivered!.headers['x-service-signature'] as string, oldSecret, {
        now: new Date(Date.now() + 301_000),
      }),
    ).toThrow(expect.objectContaining({ reason: 'timestamp_too_old' }));

    const rotated = await client.rotateWebhookSecret(endpoint.id, { overlapSeconds: 3600 });
    const [delivery] = (await client.listWebhookDeliveries(endpoint.id)).data;
    await client.resendWebhookDelivery(endpoint.id, delivery!.id);
    const [, resent] = await receiver.waitFor(2, 30_000);
    const header = resent!.headers['x-service-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const secrets of [oldSecret, rotated.secret, [rotated.secret, oldSecret]])
      expect(verifyWebhook(resent!.rawBody, header, secrets).type).toBe('session.confirming');
    expect(() => verifyWebhook(resent!.rawBody, header, ['whsec_a', 'whsec_b'])).toThrow(
      expect.objectContaining({ reason: 'signature_mismatch' }),
    );
  });

  it('sends a test event that verifies and narrows to endpoint.test', async () => {
    const endpoint = await client.createWebhookEndpoint({ url: `${receiver.baseUrl}/sdk-test-event` });
    const sent = await client.sendWebhookTestEvent(endpoint.id);
    expect(sent.eventId).toMatch(/^evt_/);
    let arrived = receiver.received.find((request) => request.path === '/sdk-test-event');
    for (let waited = 0; !arrived && waited < 300; waited += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      arrived = receiver.received.find((request) => request.path === '/sdk-test-event');
    }
    const event = verifyWebhook(
      arrived!.rawBody,
      arrived!.headers['x-service-signature'] as string,
      endpoint.secret,
    );
    // The union narrows by `type` (checked by the type check): the test event names its endpoint.
    const testedEndpoint = event.type === 'endpoint.test' ? event.data.endpoint.id : undefined;
    expect(testedEndpoint).toBe(endpoint.id);
    expect(event.id).toBe(sent.eventId);
  });
});
