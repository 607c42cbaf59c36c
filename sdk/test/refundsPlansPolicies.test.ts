import { randomUUID } from 'node:crypto';
import { getAddress } from 'viem';
import { createSessionEventActivities } from '../../activities/sessionEvents';
import { insertRefundEventOnce } from '../../db/events';
import { findRefundById } from '../../db/refunds';
import { findSessionById } from '../../db/sessions';
import { storeSubscriptionEvent } from '../../subscriptions/subscriptionEvents';
import { newEventId, serialiseRefundEvent } from '../../webhooks/events';
import { toRefundModel } from '../../webhooks/refundObject';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { eventSessionOf } from '../../webhooks/sessionLifecycleEvents';
import { webhookDeliveryStarterFor } from '../../workflowClient/webhookDeliveries';
import { startTestApp, type TestApp } from '../../test/harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../../test/harness/merchants';
import { startTestWorkers, type TestWorkers } from '../../test/harness/workers';
import { createPaymasterClient } from '../../test/paymaster/paymasterApi';
import { completedSession, storedSubscription } from '../../test/refunds/paidSessions';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/webhooks/receiver';
import {
  createStablePayClient,
  PaymasterRpcError,
  StablePayError,
  verifyWebhook,
  type StablePayClient,
  type WebhookEvent,
} from '../src';

/**
 * The SDK's refund, export, plan, subscription and sponsorship policy methods against the running app, and
 * the refund and subscription events as real deliveries: verified and narrowed by type.
 */
const PAYER = '0x00000000000000000000000000000000000000b0';

describe('the SDK: refunds, plans, subscriptions, sponsorship policies and their events', () => {
  let app: TestApp;
  let workers: TestWorkers;
  let receiver: WebhookReceiver;
  let merchant: SignedInMerchant;
  let client: StablePayClient;

  beforeAll(async () => {
    workers = await startTestWorkers({
      webhooks: { secrets: createWebhookSecretBox(developmentWebhookSecretKey()), allowPrivateTargets: true },
    });
    // The app's own workflows (sessions, refunds) go to queues nobody polls: the test writes the money the
    // monitor and settlement would record; only the webhook deliveries run, on the workers' queue.
    app = await startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: `${workers.prefix}unpolled-` });
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

  it('creates a refund once per Idempotency-Key, lists, reads and cancels it; a reported transaction is checked on chain', async () => {
    const session = await completedSession(app, merchant.auth, { amount: '25', paidUnits: 30_000_000n });
    const idempotencyKey = `refund-${randomUUID()}`;
    const body = { amount: '5', address: PAYER, reason: 'surplus' };
    const created = await client.createRefund(session.id, body, { idempotencyKey });
    expect(created).toMatchObject({
      sessionId: session.id,
      amount: '5',
      status: 'awaiting_payment',
      source: 'merchant',
      address: getAddress(PAYER),
      transfer: { chainId: session.chainId, to: getAddress(PAYER), amount: '5000000' },
    });
    expect(await client.createRefund(session.id, body, { idempotencyKey })).toEqual(created);
    await expect(
      client.createRefund(session.id, { ...body, amount: '6' }, { idempotencyKey }),
    ).rejects.toMatchObject({ name: 'StablePayError', status: 409 });
    expect((await client.listRefunds(session.id)).data.map((refund) => refund.id)).toEqual([created.id]);
    expect(await client.getRefund(session.id, created.id)).toEqual(created);

    const unmined = await client
      .reportRefundTransaction(session.id, created.id, `0x${'ab'.repeat(32)}`)
      .catch((error: unknown) => error as StablePayError);
    expect(unmined).toBeInstanceOf(StablePayError);
    expect((unmined as StablePayError).errors.map((error) => error.field)).toEqual(['txHash']);

    const above = await client
      .createRefund(session.id, { amount: '25.000001' })
      .catch((error: unknown) => error as StablePayError);
    expect((above as StablePayError).errors.map((error) => error.field)).toEqual(['amount']);

    expect(await client.cancelRefund(session.id, created.id)).toMatchObject({
      id: created.id,
      status: 'canceled',
    });
    // All 30 received is refundable again: without an address, the payer claims it by link.
    const claim = await client.createRefund(session.id);
    expect(claim).toMatchObject({ amount: '30', status: 'awaiting_address' });
    expect(claim.claimUrl).toMatch(/\/refund\/[A-Za-z0-9_-]{43}$/);

    const other = await signInNewMerchant(app);
    const theirs = await completedSession(app, other.auth, { amount: '5', paidUnits: 5_000_000n });
    await expect(client.listRefunds(theirs.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.createRefund(theirs.id, { address: PAYER })).rejects.toMatchObject({ status: 404 });
  });

  it('streams the payments export as CSV, one row per session of the range with its refunds', async () => {
    const session = await completedSession(app, merchant.auth, { amount: '8', paidUnits: 8_000_000n });
    const refund = await client.createRefund(session.id, { amount: '1', address: PAYER });
    const day = (offsetDays: number) =>
      new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
    const stream = await client.exportSessions({ from: day(-1), to: day(1) });
    expect(stream).toBeInstanceOf(ReadableStream);
    const csv = await new Response(stream).text();
    const [header, ...rows] = csv.trim().split(/\r?\n/);
    expect(header!.split(',')).toEqual(expect.arrayContaining(['id', 'receivedAmount', 'refunds']));
    const row = rows.find((line) => line.startsWith(session.id))!;
    expect(row).toContain(refund.id);
    expect(row).toContain(',8,');

    await expect(client.exportSessions({ from: day(1), to: day(-1) })).rejects.toMatchObject({
      status: 400,
      errors: [expect.objectContaining({ field: 'from' })],
    });
  });

  it('creates, lists, reads and archives plans; lists subscriptions by plan and status, reads and cancels them', async () => {
    const plan = await client.createPlan({ name: 'Beans', amount: '12.5', interval: 'month', trialDays: 3 });
    expect(plan).toMatchObject({ amount: '12.5', intervalCount: 1, trialDays: 3, archived: false });
    expect(plan.subscribeUrl).toBe(`${app.config.PUBLIC_BASE_URL}/subscribe/${plan.id}`);
    expect((await client.listPlans()).data.map((row) => row.id)).toContain(plan.id);
    expect(await client.getPlan(plan.id)).toEqual(plan);
    await expect(
      client.createPlan({ name: 'Bad', amount: '1', interval: 'month', intervalCount: 13 }),
    ).rejects.toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'intervalCount' })] });

    const first = await storedSubscription(app, {
      merchantId: merchant.merchantId,
      planId: plan.id,
      customerAccount: PAYER,
    });
    const second = await storedSubscription(app, {
      merchantId: merchant.merchantId,
      planId: plan.id,
      customerAccount: PAYER,
    });
    const active = await client.listSubscriptions({ planId: plan.id, status: 'active' });
    expect(active.data.map((row) => row.id).sort()).toEqual([first.id, second.id].sort());

    const atEnd = await client.cancelSubscription(first.id, { atPeriodEnd: true });
    expect(atEnd).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, canceledAt: null });
    const now = await client.cancelSubscription(second.id);
    expect(now).toMatchObject({ status: 'canceled', canceledAt: expect.any(String) });
    expect(await client.getSubscription(second.id)).toEqual(now);
    expect(
      (await client.listSubscriptions({ planId: plan.id, status: 'canceled' })).data.map((row) => row.id),
    ).toEqual([second.id]);
    expect(await client.archivePlan(plan.id)).toMatchObject({ id: plan.id, archived: true });

    const stranger = createStablePayClient({
      baseUrl: app.baseUrl,
      apiKey: await createApiKey(app, await signInNewMerchant(app), 'stranger'),
    });
    await expect(stranger.getSubscription(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.cancelSubscription(first.id)).rejects.toMatchObject({ status: 404 });
  });

  it('manages a client’s sponsorship policies with the merchant token: read, add with budgets and a window, change budgets, reorder, delete', async () => {
    const dashboard = createStablePayClient({ baseUrl: app.baseUrl, token: merchant.token });
    const paymasterClient = await createPaymasterClient(app, merchant);
    const [defaultPolicy] = (await dashboard.listPaymasterPolicies(paymasterClient.id)).data;
    expect(await dashboard.getPaymasterPolicy(paymasterClient.id, defaultPolicy!.id)).toEqual(defaultPolicy);

    const startsAt = new Date(Date.now() + 3600_000).toISOString();
    const endsAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const weekly = { kind: 'usd' as const, amount: '50', period: 'week' as const, scope: 'policy' as const };
    const policy = await dashboard.createPaymasterPolicy(paymasterClient.id, {
      name: 'launch week',
      chainIds: [84532],
      startsAt,
      endsAt,
      budgets: [weekly],
      approvalWebhook: null,
    });
    expect(policy).toMatchObject({ name: 'launch week', position: 1, budgets: [weekly] });
    expect(Date.parse(policy.startsAt!)).toBe(Date.parse(startsAt));

    const perSender = {
      kind: 'operations' as const,
      amount: '10',
      period: 'day' as const,
      scope: 'sender' as const,
    };
    const changed = await dashboard.updatePaymasterPolicy(paymasterClient.id, policy.id, {
      budgets: [weekly, perSender],
    });
    expect(changed.budgets).toEqual([weekly, perSender]);
    await expect(
      dashboard.updatePaymasterPolicy(paymasterClient.id, policy.id, { endsAt: new Date(0).toISOString() }),
    ).rejects.toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'endsAt' })] });

    const ordered = await dashboard.orderPaymasterPolicies(paymasterClient.id, [
      policy.id,
      defaultPolicy!.id,
    ]);
    expect(ordered.data.map((row) => row.id)).toEqual([policy.id, defaultPolicy!.id]);
    await dashboard.deletePaymasterPolicy(paymasterClient.id, defaultPolicy!.id);
    expect((await dashboard.listPaymasterPolicies(paymasterClient.id)).data).toEqual([
      expect.objectContaining({ id: policy.id, position: 0 }),
    ]);
    await expect(dashboard.getPaymasterPolicy(paymasterClient.id, defaultPolicy!.id)).rejects.toMatchObject({
      status: 404,
    });
  });

  it('sends a dry run to the paymaster RPC with the client id; a JSON-RPC error is a PaymasterRpcError', async () => {
    const paymasterClient = await createPaymasterClient(app, merchant);
    const rpc = createStablePayClient({ baseUrl: app.baseUrl, clientId: paymasterClient.clientId });
    // Not a user operation at all: refused by the RPC, which answers JSON-RPC errors with HTTP 200.
    const refused = await rpc
      .validateSponsorshipPolicies({ userOperation: {}, entryPoint: '0x0', chainId: 84532 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PaymasterRpcError);
    expect((refused as PaymasterRpcError).code).toBeLessThan(0);
    // Without the client id, the client authenticator answers HTTP 401.
    const anonymous = createStablePayClient({ baseUrl: app.baseUrl });
    await expect(
      anonymous.validateSponsorshipPolicies({ userOperation: {}, entryPoint: '0x0', chainId: 84532 }),
    ).rejects.toMatchObject({ name: 'StablePayError', status: 401 });
  });

  it('delivers refund.succeeded and the subscription events signed, and each narrows by its type', async () => {
    const endpoint = await client.createWebhookEndpoint({
      url: `${receiver.baseUrl}/money-events`,
      events: [
        'refund.succeeded',
        'subscription.created',
        'subscription.renewed',
        'subscription.payment_failed',
        'subscription.canceled',
      ],
    });
    const events = createSessionEventActivities({
      db: workers.db,
      startWebhookDelivery: webhookDeliveryStarterFor(workers.client, workers.taskQueues.webhooks),
    });

    // A refund that succeeded, stored as the refund workflow stores its event.
    const session = await completedSession(app, merchant.auth, { amount: '3', paidUnits: 3_000_000n });
    const refund = await client.createRefund(session.id, { address: PAYER });
    await app.db
      .updateTable('refunds')
      .set({ status: 'succeeded', tx_hash: `0x${'ef'.repeat(32)}`, succeeded_at: new Date() })
      .where('id', '=', refund.id)
      .execute();
    const refundRow = (await findRefundById(app.db, refund.id))!;
    const sessionRow = (await findSessionById(app.db, session.id))!;
    const refundEventId = newEventId(randomUUID());
    const refundEvent = await insertRefundEventOnce(app.db, {
      id: refundEventId,
      type: 'refund.succeeded',
      merchantId: merchant.merchantId,
      sessionId: session.id,
      refundId: refund.id,
      payload: serialiseRefundEvent({
        id: refundEventId,
        type: 'refund.succeeded',
        createdAt: new Date().toISOString(),
        data: { refund: toRefundModel(refundRow), session: eventSessionOf(sessionRow, 'completed') },
      }),
      createdAt: new Date(),
    });

    // A subscription's four occasions, stored by the subscription module itself.
    const plan = await client.createPlan({ name: 'Events', amount: '10', interval: 'month' });
    const subscription = await storedSubscription(app, {
      merchantId: merchant.merchantId,
      planId: plan.id,
      customerAccount: PAYER,
    });
    const at = new Date();
    const occasions = [
      { type: 'subscription.created' as const },
      {
        type: 'subscription.renewed' as const,
        periodIndex: 0,
        txHash: `0x${'12'.repeat(32)}`,
        session: {
          id: session.id,
          amount: '3',
          status: 'completed',
          expiresAt: at.toISOString(),
          createdAt: at.toISOString(),
        },
      },
      {
        type: 'subscription.payment_failed' as const,
        periodIndex: 1,
        attempt: 1,
        failureReason: 'insufficient_balance',
        nextAttemptAt: new Date(at.getTime() + 86_400_000).toISOString(),
      },
      { type: 'subscription.canceled' as const },
    ];
    const stored = [refundEvent];
    for (const occasion of occasions)
      stored.push(await storeSubscriptionEvent(app.db, subscription, occasion, at));
    for (const event of stored) await events.startWebhookDeliveries({ eventId: event.id });

    const arrived = await waitForPath(receiver, '/money-events', stored.length);
    const verified: WebhookEvent[] = arrived.map((request) =>
      verifyWebhook(request.rawBody, request.headers['x-service-signature'] as string, endpoint.secret),
    );
    // Each type's own fields, reached only after `type` narrowed the union (checked by the type check).
    const summary = (event: WebhookEvent): string => {
      switch (event.type) {
        case 'refund.succeeded':
          return `${event.type} ${event.data.refund.id} ${event.data.refund.amount} ${event.data.session.id}`;
        case 'subscription.created':
        case 'subscription.canceled':
          return `${event.type} ${event.data.subscription.id}`;
        case 'subscription.renewed':
          return `${event.type} ${event.data.session.id} ${event.data.periodIndex}`;
        case 'subscription.payment_failed':
          return `${event.type} ${event.data.failureReason} ${event.data.nextAttemptAt !== null}`;
        default:
          return event.type;
      }
    };
    expect(verified.map(summary).sort()).toEqual(
      [
        `refund.succeeded ${refund.id} 3 ${session.id}`,
        `subscription.created ${subscription.id}`,
        `subscription.renewed ${session.id} 0`,
        'subscription.payment_failed insufficient_balance true',
        `subscription.canceled ${subscription.id}`,
      ].sort(),
    );
  });
});

/** The requests that reached `path`, once there are `count` of them (each arrival is awaited, not a time). */
async function waitForPath(receiver: WebhookReceiver, path: string, count: number) {
  const atPath = () => receiver.received.filter((request) => request.path === path);
  while (atPath().length < count) await receiver.waitFor(receiver.received.length + 1, 30_000);
  return atPath().slice(0, count);
}
