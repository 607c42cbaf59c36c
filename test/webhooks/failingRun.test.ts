import { randomBytes } from 'node:crypto';
import { createSessionEventActivities } from '../../activities/sessionEvents';
import { createDb, type Db } from '../../db/client';
import { openWebhookDelivery, recordWebhookAttempt } from '../../db/webhookDeliveries';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { testStack } from '../harness/stack';
import { createConfirmingSession, createEndpoint, createMerchant } from './fixtures';
import { ENDPOINT_DISABLING } from '../../webhooks/endpointDisabling';

/**
 * The run of failures that disables an endpoint (docs/operations.md "A webhook endpoint disabled for failing"), at the database: attempts carry their
 * own times, so the 5-day edge is exact, and a retried record answers the same without a second event.
 */
const DAY_MS = 24 * 3600_000;
const secrets = createWebhookSecretBox(developmentWebhookSecretKey());

describe('the failing run of an endpoint', () => {
  let db: Db;
  beforeAll(() => {
    db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 3 });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  /** An endpoint with a delivery to attempt; `attempt(n, at, outcome)` records its n-th attempt at a time. */
  async function endpointWithDelivery() {
    const merchantId = await createMerchant(db);
    const { endpoint } = await createEndpoint(db, secrets, {
      merchantId,
      url: 'https://receiver.example.com/hook',
    });
    const session = await createConfirmingSession(db, merchantId);
    // The event alone: this test records attempts itself, so no Temporal client is needed.
    const events = createSessionEventActivities({
      db,
      startWebhookDelivery: undefined as never,
    });
    const event = await events.recordSessionConfirmingEvent({ sessionId: session.id });
    const delivery = (await openWebhookDelivery(db, {
      merchantId,
      endpointId: endpoint.id,
      eventId: event.id,
      workflowId: `test-${randomBytes(4).toString('hex')}`,
      workflowRunId: `run-${randomBytes(8).toString('hex')}`,
    }))!;
    const attempt = (attemptNumber: number, at: Date, outcome: 'succeeded' | 'http_error' = 'http_error') =>
      recordWebhookAttempt(
        db,
        {
          deliveryId: delivery.id,
          attemptNumber,
          attemptedAt: at,
          outcome,
          statusCode: outcome === 'succeeded' ? 200 : 503,
          latencyMs: 5,
          responseBody: null,
          error: null,
          nextAttemptAt: null,
        },
        ENDPOINT_DISABLING,
      );
    const row = () =>
      db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpoint.id).executeTakeFirstOrThrow();
    return { endpoint, attempt, row };
  }

  it('failures for just under 5 days keep the endpoint; the first failure at 5 days disables it, once', async () => {
    const { endpoint, attempt, row } = await endpointWithDelivery();
    const start = new Date('2026-03-01T00:00:00.000Z');
    expect(await attempt(1, start)).toEqual({ recorded: true, disabledEventId: null });
    expect(await attempt(2, new Date(start.getTime() + 3 * DAY_MS))).toEqual({
      recorded: true,
      disabledEventId: null,
    });
    expect(await attempt(3, new Date(start.getTime() + 5 * DAY_MS - 1))).toEqual({
      recorded: true,
      disabledEventId: null,
    });
    expect(await row()).toMatchObject({ enabled: true, failing_since: start });

    const atFiveDays = new Date(start.getTime() + 5 * DAY_MS);
    const disabling = await attempt(4, atFiveDays);
    expect(disabling.disabledEventId).toMatch(/^evt_/);
    expect(await row()).toMatchObject({
      enabled: false,
      disabled_reason: 'failing',
      disabled_at: atFiveDays,
    });
    // A retried record of the same attempt answers the same event; nothing more is stored.
    expect(await attempt(4, atFiveDays)).toEqual(disabling);
    expect(await attempt(5, new Date(atFiveDays.getTime() + DAY_MS))).toEqual({
      recorded: true,
      disabledEventId: null,
    });
    const events = await db
      .selectFrom('events')
      .selectAll()
      .where('type', '=', 'endpoint.disabled')
      .where('merchant_id', '=', endpoint.merchant_id)
      .execute();
    expect(events).toHaveLength(1);
    expect(events[0]!.session_id).toBeNull();
    expect(JSON.parse(events[0]!.payload)).toEqual({
      id: disabling.disabledEventId,
      type: 'endpoint.disabled',
      createdAt: atFiveDays.toISOString(),
      data: { endpoint: { id: endpoint.id, url: endpoint.url, disabledAt: atFiveDays.toISOString() } },
    });
  });

  it('a success ends the run: failures after it count from their own start', async () => {
    const { attempt, row } = await endpointWithDelivery();
    const start = new Date('2026-04-01T00:00:00.000Z');
    await attempt(1, start);
    await attempt(2, new Date(start.getTime() + 4 * DAY_MS), 'succeeded');
    expect((await row()).failing_since).toBeNull();
    const again = new Date(start.getTime() + 4 * DAY_MS + 3600_000);
    await attempt(3, again);
    expect(await attempt(4, new Date(start.getTime() + 6 * DAY_MS))).toEqual({
      recorded: true,
      disabledEventId: null,
    });
    expect(await row()).toMatchObject({ enabled: true, failing_since: again });
  });
});
