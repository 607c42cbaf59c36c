import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { heartbeat } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { getAddress, numberToHex, type Address, type Hex } from 'viem';
import { createSessionEventActivities } from '../../activities/sessionEvents';
import { createSubscriptionActivities, type PeriodChargeResult } from '../../activities/subscriptions';
import { createNetworkRegistry } from '../../chain/networkRegistry';
import { createOperatorChains, type OperatorChains } from '../../chain/operatorChains';
import { findSubscriptionById, type SubscriptionRow } from '../../db/subscriptions';
import { findSubscriptionPlanById } from '../../db/subscriptionPlans';
import { startTimeSkippingTestEnvironment } from '../../dev/services/temporal';
import type { ChainTimeWaitDetails } from '../../subscriptions/awaitPeriodOnChain';
import { chargeAttemptTimes, periodDueAt } from '../../subscriptions/chargeSchedule';
import { chargePeriod } from '../../subscriptions/periodCharge';
import { openPeriod } from '../../subscriptions/periodSession';
import { chargeScheduleOf, delegationFromJson } from '../../subscriptions/subscribe';
import { subscriptionEventId } from '../../subscriptions/subscriptionEvents';
import { cancelSubscriptionSignal, subscriptionWorkflow } from '../../workflows/subscription';
import { subscriptionWorkflowId } from '../../workflows/workflowIds';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { quietTemporalRuntime } from '../harness/workers';
import { frameworkOn, usdcBalance, type LocalChain } from '../delegation/delegatorAccounts';
import type { StartAnvilChainsReturnType } from '../../dev/services/anvil';
import { publicClientFor, rpc } from '../paymaster/smartAccounts';
import {
  TOKENS,
  forkedChainWithExecutor,
  newCustomer,
  periodicPermission,
  revoke,
  subscribeBodyOf,
  type Customer,
} from './subscriberWorld';

/**
 * The per-subscription workflow on Temporal's time-skipping server with the real activities, on the real
 * ERC20PeriodTransferEnforcer of a local chain (issue 42, money safety): a period is charged once however
 * often its activity runs — retried after its answer was lost, or after the worker died between the
 * redemption and its record —; a revoked permission is never redeemed (payment_failed, past_due, canceled
 * at the period's end); a balance below the amount moves nothing and is retried after 1, 3 and 5 days.
 */

const AMOUNT = 10n * TOKENS;
/**
 * A private fork of the stack's chain (same id and contracts): its clock follows the time-skipping server's,
 * which runs days ahead once a test skipped, since a charge is due by chain time; moving the shared chain's
 * clock would move every other file's.
 */
let chain: LocalChain;

describe('the subscription charging workflow', () => {
  let app: TestApp;
  let env: TestWorkflowEnvironment;
  let executor: OperatorChains;
  let executorAddress: Address;
  let clockOffsetMs = 0;
  let fork: StartAnvilChainsReturnType;
  const startedSessions: string[] = [];
  /** Per test: what an attempt of the charge activity does instead of the real one alone. */
  let chargeInterference:
    | ((
        input: ChargeInput,
        attempt: number,
        real: () => Promise<PeriodChargeResult>,
      ) => Promise<PeriodChargeResult>)
    | undefined;
  /** Per test: told each time a charge found the chain behind its period's start (its heartbeat). */
  let onChainBehind: ((details: ChainTimeWaitDetails) => void) | undefined;
  type ChargeInput = { subscriptionId: string; periodIndex: number; sessionExpiresAt: string };

  beforeAll(async () => {
    quietTemporalRuntime();
    const forked = await forkedChainWithExecutor();
    ({ fork, chain } = forked);
    const { executorKey } = forked;
    executorAddress = executorKey.address;
    env = await startTimeSkippingTestEnvironment();
    // The api's clock follows the time-skipping server's (which runs ahead once a test skipped): a
    // subscription's schedule starts at the workflow's "now".
    app = await startTestApp(
      {
        SUBSCRIPTION_EXECUTOR_ADDRESS: executorAddress,
        TEMPORAL_TASK_QUEUE_PREFIX: `charging-${randomUUID()}-`,
        [`RPC_URL_${chain.chainId}`]: chain.rpcUrl,
      },
      { now: () => new Date(Date.now() + clockOffsetMs) },
    );
    const networks = createNetworkRegistry(app.config);
    executor = createOperatorChains({ networks, operatorPrivateKey: executorKey.key });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await env?.teardown();
    await fork?.stop();
  });

  /** Moves the chain's clock to `unixSeconds` (never back) and mines a block there. */
  async function chainTimeAtLeast(unixSeconds: bigint) {
    const latest = (await publicClientFor(chain.rpcUrl).getBlock()).timestamp;
    if (latest >= unixSeconds) return;
    await rpc(chain.rpcUrl, 'evm_setNextBlockTimestamp', [numberToHex(unixSeconds)]);
    await rpc(chain.rpcUrl, 'evm_mine', []);
  }

  async function subscribedCustomer(
    balance: bigint,
    planFields: Record<string, unknown> = {},
    permission: { startTime?: bigint } = {},
  ): Promise<{
    customer: Customer;
    sk: { authorization: string };
    row: SubscriptionRow;
    merchantId: string;
  }> {
    clockOffsetMs = (await env.currentTimeMs()) - Date.now();
    // The chain's clock follows the workflow's, as in production (a charge is due by chain time).
    await chainTimeAtLeast(BigInt(Math.ceil((Date.now() + clockOffsetMs) / 1000)));
    const merchant = await signInNewMerchant(app);
    const sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    const plan = await app.request('/v1/plans', {
      method: 'POST',
      headers: sk,
      json: { name: 'Monthly', amount: '10', interval: 'month', ...planFields },
    });
    const customer = await newCustomer(balance, chain);
    const delegation = await periodicPermission(customer, {
      executor: executorAddress,
      amount: AMOUNT,
      startTime: permission.startTime,
    });
    const subscribed = await app.request(`/v1/subscribe/${plan.body.id}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation),
    });
    expect(subscribed.status).toBe(201);
    return {
      customer,
      sk,
      row: (await findSubscriptionById(app.db, subscribed.body.id))!,
      merchantId: merchant.merchantId,
    };
  }

  async function withWorker<T>(body: (taskQueue: string) => Promise<T>): Promise<T> {
    const taskQueue = `subscriptions-${randomUUID()}`;
    const real = createSubscriptionActivities({
      db: app.db,
      networks: createNetworkRegistry(app.config),
      executor,
      startSessionWorkflow: async (session) => {
        startedSessions.push(session.sessionId);
        return 'started';
      },
      // The api's clock: the events' times follow one clock.
      now: () => new Date(Date.now() + clockOffsetMs),
      heartbeat: (details) => {
        heartbeat(details);
        onChainBehind?.(details);
      },
    });
    const attempts = new Map<string, number>();
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: require.resolve('../../workflows'),
      activities: {
        ...real,
        ...createSessionEventActivities({ db: app.db, startWebhookDelivery: async () => 'started' }),
        async chargeSubscriptionPeriod(input: ChargeInput) {
          const key = `${input.subscriptionId}:${input.periodIndex}`;
          const attempt = (attempts.get(key) ?? 0) + 1;
          attempts.set(key, attempt);
          const charge = () => real.chargeSubscriptionPeriod(input);
          return chargeInterference ? chargeInterference(input, attempt, charge) : charge();
        },
      },
    });
    return worker.runUntil(body(taskQueue));
  }

  const start = (row: SubscriptionRow, taskQueue: string) =>
    env.client.workflow.start(subscriptionWorkflow, {
      workflowId: subscriptionWorkflowId(row.id),
      taskQueue,
      args: [
        {
          subscriptionId: row.id,
          schedule: chargeScheduleOf(row),
          periodIndex: 0,
          createdEventId: subscriptionEventId(row.id, 'created'),
        },
      ],
    });

  const eventsOf = async (merchantId: string) =>
    (
      await app.db
        .selectFrom('events')
        .select(['type', 'payload'])
        .where('merchant_id', '=', merchantId)
        .orderBy('created_at')
        .orderBy('id')
        .execute()
    ).map((event) => ({ type: event.type, data: JSON.parse(event.payload).data }));

  const chargesOf = (subscriptionId: string) =>
    app.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', subscriptionId)
      .orderBy('period_index')
      .execute();

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('charges the period once though its activity ran three times: the worker died after the redemption, then the answer was lost', async () => {
    const { customer, row, merchantId } = await subscribedCustomer(100n * TOKENS);
    let sentByTheDeadWorker: Hex | undefined;
    chargeInterference = async (input, attempt, real) => {
      if (attempt === 2) {
        await real();
        throw new Error('the answer was lost (activity timed out after it recorded the charge)');
      }
      if (attempt === 1) {
        // The first worker opened the period, redeemed, and died before recording anything.
        const client = executor.client(chain.chainId);
        const subscription = (await findSubscriptionById(app.db, input.subscriptionId))!;
        const opened = await openPeriod(app.db, createNetworkRegistry(app.config), {
          subscription,
          plan: (await findSubscriptionPlanById(app.db, subscription.plan_id))!,
          periodIndex: input.periodIndex,
          sandboxMode: true,
          expiresAt: new Date(input.sessionExpiresAt),
          now: new Date(),
          fromBlock: await client.getBlockNumber(),
        });
        const delegation = delegationFromJson(subscription.delegation);
        const outcome = await chargePeriod(client, frameworkOn(chain), {
          delegation,
          periodCaveat: delegation.caveats[0]!,
          token: chain.contracts.usdc!,
          customer: customer.account,
          depositAddress: opened.depositAddress,
          amount: AMOUNT,
          fromBlock: BigInt(opened.charge.from_block!),
        });
        sentByTheDeadWorker = (outcome as { txHash: Hex }).txHash;
        throw new Error('worker died between the redemption and its record');
      }
      return real();
    };
    await withWorker(async (taskQueue) => {
      const handle = await start(row, taskQueue);
      const renewed = await until(
        () => eventsOf(merchantId),
        (events) => events.some((event) => event.type === 'subscription.renewed'),
      );
      await handle.signal(cancelSubscriptionSignal, { atPeriodEnd: false });
      expect(await handle.result()).toMatchObject({ ended: 'canceled' });
      const [charge, ...others] = await chargesOf(row.id);
      expect(others).toEqual([]);
      expect(charge).toMatchObject({ period_index: 0, status: 'redeemed', tx_hash: sentByTheDeadWorker });
      const session = await app.db
        .selectFrom('sessions')
        .selectAll()
        .where('subscription_id', '=', row.id)
        .execute();
      expect(session.map((entry) => entry.id)).toEqual([charge!.session_id]);
      expect(startedSessions).toContain(charge!.session_id);
      const options = await app.db
        .selectFrom('payment_options')
        .selectAll()
        .where('session_id', '=', charge!.session_id)
        .execute();
      expect(options.map((option) => [option.chain_id, option.symbol])).toEqual([[chain.chainId, 'USDC']]);
      expect(await usdcBalance(chain, getAddress(options[0]!.deposit_address))).toBe(AMOUNT);
      expect(await usdcBalance(chain, customer.account)).toBe(90n * TOKENS);
      expect(renewed.find((event) => event.type === 'subscription.renewed')!.data).toMatchObject({
        session: { id: charge!.session_id, amount: '10' },
        periodIndex: 0,
        txHash: sentByTheDeadWorker,
        subscription: { status: 'active', latestSessionId: charge!.session_id },
      });
      expect((await eventsOf(merchantId)).map((event) => event.type)).toEqual([
        'subscription.created',
        'subscription.renewed',
        'subscription.canceled',
      ]);
    });
    chargeInterference = undefined;
  });

  it('a revoked permission is never redeemed: payment_failed with no next attempt, past_due, canceled at the period’s end', async () => {
    const { customer, row, merchantId } = await subscribedCustomer(100n * TOKENS);
    await revoke(customer, delegationFromJson(row.delegation));
    await withWorker(async (taskQueue) => {
      const handle = await start(row, taskQueue);
      expect(await handle.result()).toEqual({ ended: 'canceled', periodIndex: 0 });
    });
    const events = await eventsOf(merchantId);
    expect(events.map((event) => event.type)).toEqual([
      'subscription.created',
      'subscription.payment_failed',
      'subscription.canceled',
    ]);
    expect(events[1]!.data).toMatchObject({ failureReason: 'permission_revoked', nextAttemptAt: null });
    expect(events[2]!.data.subscription).toMatchObject({ status: 'canceled' });
    expect(await chargesOf(row.id)).toMatchObject([
      { status: 'failed', failure_reason: 'permission_revoked' },
    ]);
    expect(await usdcBalance(chain, customer.account)).toBe(100n * TOKENS);
  });

  it('a balance below the amount charges nothing: tried again after 1, 3 and 5 days, then past_due and canceled', async () => {
    const { customer, row, merchantId } = await subscribedCustomer(AMOUNT - 1n);
    await withWorker(async (taskQueue) => {
      const handle = await start(row, taskQueue);
      expect(await handle.result()).toEqual({ ended: 'canceled', periodIndex: 0 });
    });
    const events = await eventsOf(merchantId);
    const failures = events.filter((event) => event.type === 'subscription.payment_failed');
    const [, ...retries] = chargeAttemptTimes(chargeScheduleOf(row), 0);
    expect(failures.map((event) => event.data.nextAttemptAt)).toEqual([
      ...retries.map((at) => new Date(at).toISOString()),
      null,
    ]);
    expect(failures.map((event) => event.data.failureReason)).toEqual(Array(4).fill('insufficient_balance'));
    expect(events.at(-1)!.type).toBe('subscription.canceled');
    expect(await chargesOf(row.id)).toMatchObject([{ status: 'failed', failed_attempts: 4 }]);
    expect(await usdcBalance(chain, customer.account)).toBe(AMOUNT - 1n);
  });
  it.each([
    ['at the period’s end', { atPeriodEnd: true }],
    ['at once', { atPeriodEnd: false }],
  ])(
    'a cancelation %s through the api stops the next charge even when the workflow never got the signal',
    async (_when, body) => {
      const { customer, sk, row, merchantId } = await subscribedCustomer(100n * TOKENS);
      await withWorker(async (taskQueue) => {
        const handle = await start(row, taskQueue);
        await until(
          () => chargesOf(row.id),
          (charges) => charges[0]?.status === 'redeemed',
        );
        await until(
          () => eventsOf(merchantId),
          (events) => events.some((event) => event.type === 'subscription.renewed'),
        );
        // The api signals the run's own server; this workflow runs on the time-skipping one and reads the row.
        const canceled = await app.request(`/v1/subscriptions/${row.id}/cancel`, {
          method: 'POST',
          headers: sk,
          json: body,
        });
        expect(canceled.status).toBe(200);
        expect(await handle.result()).toEqual({ ended: 'canceled', periodIndex: 1 });
      });
      expect((await chargesOf(row.id)).map((charge) => charge.period_index)).toEqual([0]);
      expect(await usdcBalance(chain, customer.account)).toBe(90n * TOKENS);
      const types = (await eventsOf(merchantId)).map((event) => event.type);
      expect(types).toEqual(['subscription.created', 'subscription.renewed', 'subscription.canceled']);
      const after = await findSubscriptionById(app.db, row.id);
      expect(after).toMatchObject({ status: 'canceled', cancel_at_period_end: body.atPeriodEnd });
    },
  );
  it('a trial subscription is first charged at the trial’s end and is active from then', async () => {
    const { customer, row, merchantId } = await subscribedCustomer(100n * TOKENS, { trialDays: 14 });
    expect(row.status).toBe('trialing');
    const schedule = chargeScheduleOf(row);
    await withWorker(async (taskQueue) => {
      const handle = await start(row, taskQueue);
      await env.sleep(14 * 86_400_000);
      await until(
        () => eventsOf(merchantId),
        (events) => events.some((event) => event.type === 'subscription.renewed'),
      );
      await handle.signal(cancelSubscriptionSignal, { atPeriodEnd: false });
      await handle.result();
    });
    const [charge] = await chargesOf(row.id);
    expect(charge).toMatchObject({ period_index: 0, status: 'redeemed' });
    const renewed = (await eventsOf(merchantId)).find((event) => event.type === 'subscription.renewed')!;
    expect(renewed.data.subscription).toMatchObject({
      status: 'active',
      currentPeriodStart: new Date(schedule.firstDueMs).toISOString(),
      currentPeriodEnd: new Date(schedule.firstDueMs + schedule.periodMs).toISOString(),
    });
    expect(schedule.firstDueMs - row.current_period_start.getTime()).toBe(14 * 86_400_000);
    expect(await usdcBalance(chain, customer.account)).toBe(90n * TOKENS);
  });

  it('a permission that starts at the due time is charged once the chain reaches it, though its latest block trails our clock', async () => {
    // The permission begins exactly at the first charge's due time (a wallet's own grant, not our page's),
    // and the chain's latest block is stamped three seconds before it when the charge runs.
    const chainClient = publicClientFor(chain.rpcUrl);
    const chainTime = (await chainClient.getBlock()).timestamp;
    const ourTime = BigInt(Math.ceil((await env.currentTimeMs()) / 1000));
    // Ahead of both clocks by more than the customer's setup takes on chain.
    const due = (chainTime > ourTime ? chainTime : ourTime) + 120n;
    const { customer, row, merchantId } = await subscribedCustomer(100n * TOKENS, {}, { startTime: due });
    expect(periodDueAt(chargeScheduleOf(row), 0)).toBe(Number(due) * 1000);
    await chainTimeAtLeast(due - 3n);

    let sawChainBehind!: (details: ChainTimeWaitDetails) => void;
    const chainBehind = new Promise<ChainTimeWaitDetails>((resolve) => (sawChainBehind = resolve));
    onChainBehind = (details) => sawChainBehind(details);
    await withWorker(async (taskQueue) => {
      const handle = await start(row, taskQueue);
      // To the due time by the workflow's clock (its timer fires).
      await env.sleep(Number(due) * 1000 - (await env.currentTimeMs()));
      // The charge runs at the due time by the workflow's clock and finds the chain behind it; a charge that
      // read the allowance now would find none (the permission has not begun on chain) and fail instead.
      const behind = await Promise.race([
        chainBehind,
        until(
          () => eventsOf(merchantId),
          (events) => events.some((event) => event.type === 'subscription.payment_failed'),
        ).then((events) => {
          throw new Error(`the charge failed: ${JSON.stringify(events.at(-1))}`);
        }),
      ]);
      expect(behind.periodStart).toBe(due.toString());
      expect(BigInt(behind.chainTime)).toBeLessThan(due);
      expect(await chargesOf(row.id)).toEqual([]);

      // The chain reaches the due time: the waiting charge redeems the period.
      await chainTimeAtLeast(due);
      await until(
        () => eventsOf(merchantId),
        (events) => events.some((event) => event.type === 'subscription.renewed'),
      );
      await handle.signal(cancelSubscriptionSignal, { atPeriodEnd: false });
      // Canceled in the next period's wait: the charged period was the only one.
      expect(await handle.result()).toEqual({ ended: 'canceled', periodIndex: 1 });
    });
    onChainBehind = undefined;

    expect((await eventsOf(merchantId)).map((event) => event.type)).toEqual([
      'subscription.created',
      'subscription.renewed',
      'subscription.canceled',
    ]);
    expect(await chargesOf(row.id)).toMatchObject([
      { period_index: 0, status: 'redeemed', failed_attempts: 0 },
    ]);
    const sessions = await app.db
      .selectFrom('sessions')
      .select('id')
      .where('subscription_id', '=', row.id)
      .execute();
    expect(sessions).toHaveLength(1);
    expect(await usdcBalance(chain, customer.account)).toBe(90n * TOKENS);
  });
});
