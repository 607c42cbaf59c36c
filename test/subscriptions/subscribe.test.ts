import { Client, Connection } from '@temporalio/client';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { subscriptionWorkflowId } from '../../workflows/workflowIds';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { TOKENS, newCustomer, periodicPermission, subscribeBodyOf, type Customer } from './subscriberWorld';

/**
 * The public subscribe route and cancelation (issue 42): the customer's signed permission for
 * a plan is judged before anything is saved — refused with the sentence as a 400, no subscription, no
 * event —, accepted it makes the subscription (`trialing` with trial days, else `active`) with its
 * `subscription.created` event and starts its charging workflow; the same permission again answers the
 * same subscription. Another merchant can neither read nor cancel it (404).
 */

const executor = privateKeyToAccount(generatePrivateKey()).address;
const AMOUNT = 10n * TOKENS;

describe('subscribing to a plan and canceling', () => {
  let app: TestApp;
  let customer: Customer;
  let connection: Connection;
  let temporal: Client;
  beforeAll(async () => {
    connection = await Connection.connect({ address: testStack().temporalAddress });
    temporal = new Client({ connection, namespace: testStack().temporalNamespace });
    // Workflows go to queues no worker polls: this file tests the route, the charging has its own tests.
    app = await startTestApp({
      SUBSCRIPTION_EXECUTOR_ADDRESS: executor,
      TEMPORAL_TASK_QUEUE_PREFIX: `subscribe-${Date.now()}-`,
    });
    customer = await newCustomer(100n * TOKENS);
  }, 120_000);
  afterAll(async () => {
    await app.close();
    await connection.close();
  });

  async function merchantWithPlan(plan: Record<string, unknown> = {}) {
    const merchant = await signInNewMerchant(app);
    const sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    const created = await app.request('/v1/plans', {
      method: 'POST',
      headers: sk,
      json: { name: 'Monthly', amount: '10', interval: 'month', ...plan },
    });
    expect(created.status).toBe(201);
    return { merchant, sk, planId: created.body.id as string };
  }

  const subscriptionCount = async (planId: string) =>
    Number(
      (
        await app.db
          .selectFrom('subscriptions')
          .select((eb) => eb.fn.countAll().as('count'))
          .where('plan_id', '=', planId)
          .executeTakeFirstOrThrow()
      ).count,
    );

  const eventsOf = (merchantId: string) =>
    app.db
      .selectFrom('events')
      .select(['id', 'type', 'payload'])
      .where('merchant_id', '=', merchantId)
      .orderBy('created_at')
      .execute();

  it('the exact permission subscribes: 201 active, subscription.created stored, the workflow started; again: 200, same one', async () => {
    const { merchant, sk, planId } = await merchantWithPlan();
    const delegation = await periodicPermission(customer, { executor, amount: AMOUNT });
    const answer = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation),
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      planId,
      status: 'active',
      customerAccount: customer.account,
      chainId: 84532,
      token: 'USDC',
      cancelAtPeriodEnd: false,
      canceledAt: null,
      latestSessionId: null,
    });
    // The customer's manage link is in the answer that created it only.
    const { manageUrl, ...subscription } = answer.body;
    expect(manageUrl).toMatch(/\/subscribe\/manage\/[A-Za-z0-9_-]{43}$/);
    const read = await app.request(`/v1/subscriptions/${answer.body.id}`, { headers: sk });
    expect(read.body).toEqual(subscription);

    const events = await eventsOf(merchant.merchantId);
    expect(events.map((event) => event.type)).toEqual(['subscription.created']);
    expect(JSON.parse(events[0]!.payload)).toMatchObject({
      id: events[0]!.id,
      type: 'subscription.created',
      data: { subscription },
    });
    const described = await temporal.workflow.getHandle(subscriptionWorkflowId(answer.body.id)).describe();
    expect(described.status.name).toBe('RUNNING');

    const again = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation),
    });
    expect(again).toMatchObject({ status: 200, body: { ...subscription, manageUrl: null } });
    expect(await subscriptionCount(planId)).toBe(1);
    expect(await eventsOf(merchant.merchantId)).toHaveLength(1);
  });

  it('a plan with trial days starts trialing until the trial ends', async () => {
    const { planId } = await merchantWithPlan({ trialDays: 14 });
    const delegation = await periodicPermission(customer, { executor, amount: AMOUNT });
    const answer = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation),
    });
    expect(answer.status).toBe(201);
    expect(answer.body.status).toBe('trialing');
    const trial = Date.parse(answer.body.currentPeriodEnd) - Date.parse(answer.body.currentPeriodStart);
    expect(trial).toBe(14 * 86_400_000);
  });

  it.each([
    [
      'less than the plan’s amount',
      { amount: AMOUNT - 1n },
      /allows 9999999 base units per period; the plan charges exactly 10000000/,
    ],
    [
      'another delegate',
      { executor: privateKeyToAccount(generatePrivateKey()).address },
      /not to the subscription executor/,
    ],
    ['another period', { interval: 'week' as const }, /period is 604800 seconds; the plan's is 2592000/],
  ])('refuses a permission for %s with its sentence, saving nothing', async (_name, change, message) => {
    const { merchant, planId } = await merchantWithPlan();
    const delegation = await periodicPermission(customer, { executor, amount: AMOUNT, ...change });
    const refused = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(message);
    expect(await subscriptionCount(planId)).toBe(0);
    expect(await eventsOf(merchant.merchantId)).toEqual([]);
  });

  it('refuses another chain or token, an archived plan, and answers 404 for an unknown plan', async () => {
    const { sk, planId } = await merchantWithPlan();
    const delegation = await periodicPermission(customer, { executor, amount: AMOUNT });
    const unknownChain = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation, 999),
    });
    expect(unknownChain).toMatchObject({
      status: 400,
      body: { message: 'Chain 999 does not carry subscriptions' },
    });
    // Chain 1 carries subscriptions in the test stack; the permission was signed for 84532.
    const otherChain = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation, 1),
    });
    expect(otherChain.status).toBe(400);
    expect(otherChain.body.message).toMatch(
      /^The permission's signature is not valid: .*signed for another chain/,
    );
    const usdt = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: { ...subscribeBodyOf(delegation), token: 'USDT' },
    });
    expect(usdt.status).toBe(400);
    expect(usdt.body.message).toMatch(
      /is for token 0x[0-9a-fA-F]{40}, not 0x[0-9a-fA-F]{40} on chain 84532|USDT is not offered on chain 84532/,
    );
    await app.request(`/v1/plans/${planId}/archive`, { method: 'POST', headers: sk });
    const archived = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation),
    });
    expect(archived).toMatchObject({
      status: 400,
      body: { message: 'The plan is archived and takes no new subscriber' },
    });
    const unknown = await app.request('/v1/subscribe/00000000-0000-4000-8000-000000000000', {
      method: 'POST',
      json: subscribeBodyOf(delegation),
    });
    expect(unknown).toMatchObject({ status: 404, body: { message: 'Plan not found' } });
    expect(await subscriptionCount(planId)).toBe(0);
  });

  it('cancels at period end, then at once (subscription.canceled once); another merchant gets 404 on both route sets', async () => {
    const { merchant, sk, planId } = await merchantWithPlan();
    const delegation = await periodicPermission(customer, { executor, amount: AMOUNT });
    const subscribed = await app.request(`/v1/subscribe/${planId}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation),
    });
    const id = subscribed.body.id as string;

    const other = await signInNewMerchant(app);
    const otherSk = { authorization: `Bearer ${await createApiKey(app, other)}` };
    for (const [path, headers] of [
      [`/v1/subscriptions/${id}/cancel`, otherSk],
      [`/v1/merchants/me/subscriptions/${id}/cancel`, other.auth],
    ] as const) {
      const refused = await app.request(path, { method: 'POST', headers, json: {} });
      expect(refused).toMatchObject({ status: 404, body: { message: 'Subscription not found' } });
      expect((await app.request(path.replace('/cancel', ''), { headers })).status).toBe(404);
    }

    const atEnd = await app.request(`/v1/subscriptions/${id}/cancel`, {
      method: 'POST',
      headers: sk,
      json: { atPeriodEnd: true },
    });
    expect(atEnd).toMatchObject({
      status: 200,
      body: { status: 'active', cancelAtPeriodEnd: true, canceledAt: null },
    });
    const badBody = await app.request(`/v1/subscriptions/${id}/cancel`, {
      method: 'POST',
      headers: sk,
      json: { atPeriodEnd: 'yes' },
    });
    expect(badBody.status).toBe(400);

    const now = await app.request(`/v1/merchants/me/subscriptions/${id}/cancel`, {
      method: 'POST',
      headers: merchant.auth,
    });
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ status: 'canceled', canceledAt: expect.any(String) });
    const again = await app.request(`/v1/subscriptions/${id}/cancel`, { method: 'POST', headers: sk });
    expect(again).toMatchObject({ status: 200, body: now.body });
    const events = await eventsOf(merchant.merchantId);
    expect(events.map((event) => event.type)).toEqual(['subscription.created', 'subscription.canceled']);
    expect(JSON.parse(events[1]!.payload).data.subscription).toEqual(now.body);
  });
});
