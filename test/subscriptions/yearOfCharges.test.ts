import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { numberToHex, parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSessionEventActivities } from '../../activities/sessionEvents';
import { createSubscriptionActivities, type PeriodChargeInput } from '../../activities/subscriptions';
import { createOperatorChains } from '../../chain/operatorChains';
import { findSubscriptionById } from '../../db/subscriptions';
import { startTimeSkippingTestEnvironment } from '../../dev/services/temporal';
import { periodDueAt } from '../../subscriptions/chargeSchedule';
import { chargeScheduleOf } from '../../subscriptions/subscribe';
import { subscriptionEventId } from '../../subscriptions/subscriptionEvents';
import { sessionStarterFor } from '../../workflowClient/sessions';
import { cancelSubscriptionSignal, subscriptionWorkflow } from '../../workflows/subscription';
import { subscriptionWorkflowId } from '../../workflows/workflowIds';
import { type LocalChain, usdcBalance } from '../delegation/delegatorAccounts';
import { rpc } from '../paymaster/smartAccounts';
import { startSettlementStack, statusesRecorded, type SettlementStack } from '../settlement/settlementStack';
import { TOKENS, newCustomer, periodicPermission, subscribeBodyOf } from './subscriberWorld';

/**
 * Acceptance of issue 42: a year of monthly charges. The subscription's workflow runs on Temporal's
 * time-skipping server (each month skipped); its charges redeem the customer's permission on the real
 * ERC20PeriodTransferEnforcer of a private local chain whose clock is moved to each period's due time
 * before the charge; each period's session is settled by the project's own workers (deposit monitor,
 * forwarder, swap, stake) on the run's Temporal server. Twelve sessions, each completed once, twelve
 * `subscription.renewed`, the customer's balance down by exactly twelve times the amount.
 */

const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;
const AMOUNT = 10n * TOKENS;
const MONTHS = 12;

describe('a year of monthly charges', () => {
  let stack: SettlementStack;
  let env: TestWorkflowEnvironment;
  const executorKey = generatePrivateKey();
  const executorAddress = privateKeyToAccount(executorKey).address;

  beforeAll(async () => {
    stack = await startSettlementStack({
      chainIds: [ETHEREUM_SEPOLIA],
      env: { SUBSCRIPTION_EXECUTOR_ADDRESS: executorAddress },
    });
    await rpc(stack.rpcUrls[ETHEREUM_SEPOLIA]!, 'anvil_setBalance', [
      executorAddress,
      numberToHex(parseEther('10')),
    ]);
    env = await startTimeSkippingTestEnvironment();
  }, 240_000);
  afterAll(async () => {
    await env?.teardown();
    await stack?.stop();
  });

  const chainClient = () => stack.chain(ETHEREUM_SEPOLIA);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 120_000) {
    const deadline = Date.now() + ms;
    let last = await read();
    while (!done(last)) {
      if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)} after ${ms} ms`);
      await sleep(250);
      last = await read();
    }
    return last;
  }

  /** Moves the chain's clock to `unixSeconds` (never back) and mines a block there. */
  async function chainTimeAtLeast(unixSeconds: number) {
    const client = chainClient();
    const latest = await client.getBlock();
    if (latest.timestamp >= BigInt(unixSeconds)) return;
    await client.setNextBlockTimestamp({ timestamp: BigInt(unixSeconds) });
    await client.mine({ blocks: 1 });
  }

  it('charges twelve months once each; every period session completes once; the customer pays exactly 12 × the amount', async () => {
    const chain = {
      chainId: ETHEREUM_SEPOLIA,
      rpcUrl: stack.rpcUrls[ETHEREUM_SEPOLIA]!,
      contracts: stack.contracts(ETHEREUM_SEPOLIA),
    } as unknown as LocalChain;
    const plan = await stack.app.request('/v1/plans', {
      method: 'POST',
      headers: stack.sk,
      json: { name: 'Monthly', amount: '10', interval: 'month' },
    });
    const customer = await newCustomer(1_000n * TOKENS, chain);
    const delegation = await periodicPermission(customer, { executor: executorAddress, amount: AMOUNT });
    const subscribed = await stack.app.request(`/v1/subscribe/${plan.body.id}`, {
      method: 'POST',
      json: subscribeBodyOf(delegation, ETHEREUM_SEPOLIA),
    });
    expect(subscribed.status).toBe(201);
    const row = (await findSubscriptionById(stack.db, subscribed.body.id))!;
    // The api started its workflow on the run's server; this test runs it on the time-skipping one instead.
    await stack.temporal.workflow
      .getHandle(subscriptionWorkflowId(row.id))
      .terminate('charged on the time-skipping server by this test');
    const schedule = chargeScheduleOf(row);
    const before = await usdcBalance(chain, customer.account);

    const real = createSubscriptionActivities({
      db: stack.db,
      networks: stack.networks,
      executor: createOperatorChains({ networks: stack.networks, operatorPrivateKey: executorKey }),
      // Period sessions run on the stack's workers (real time), like every session.
      startSessionWorkflow: sessionStarterFor(stack.temporal, stack.taskQueues.sessions),
    });
    const taskQueue = `year-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: require.resolve('../../workflows'),
      activities: {
        ...real,
        ...createSessionEventActivities({ db: stack.db, startWebhookDelivery: async () => 'started' }),
        // The chain's clock follows the workflow's: a period is charged at its due time on chain too.
        async chargeSubscriptionPeriod(input: PeriodChargeInput) {
          await chainTimeAtLeast(Math.ceil(periodDueAt(schedule, input.periodIndex) / 1000));
          return real.chargeSubscriptionPeriod(input);
        },
      },
    });

    const chargeOf = (periodIndex: number) =>
      stack.db
        .selectFrom('subscription_charges')
        .selectAll()
        .where('subscription_id', '=', row.id)
        .where('period_index', '=', periodIndex)
        .executeTakeFirst();
    const sessionStatus = async (sessionId: string) =>
      (await stack.db.selectFrom('sessions').select('status').where('id', '=', sessionId).executeTakeFirst())
        ?.status;

    const sessionIds: string[] = [];
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(subscriptionWorkflow, {
        workflowId: subscriptionWorkflowId(row.id),
        taskQueue,
        args: [
          {
            subscriptionId: row.id,
            schedule,
            periodIndex: 0,
            createdEventId: subscriptionEventId(row.id, 'created'),
          },
        ],
      });
      for (let month = 0; month < MONTHS; month++) {
        const charge = await waitFor(
          () => chargeOf(month),
          (found) => found?.status === 'redeemed',
          `the charge of month ${month + 1}`,
        );
        sessionIds.push(charge!.session_id);
        await waitFor(
          async () => {
            // The deposit monitor acts on buried deposits: bury the charge's transfer.
            await chainClient().mine({ blocks: CONFIRMATIONS + 1 });
            return sessionStatus(charge!.session_id);
          },
          (status) => status === 'completed',
          `the session of month ${month + 1}`,
        );
        // To the next period's due time (the workflow's timer fires; the chain follows in the charge).
        if (month < MONTHS - 1) await env.sleep(schedule.periodMs);
      }
      await handle.signal(cancelSubscriptionSignal, { atPeriodEnd: false });
      expect(await handle.result()).toMatchObject({ ended: 'canceled' });
    });

    expect(new Set(sessionIds).size).toBe(MONTHS);
    for (const sessionId of sessionIds) {
      expect(
        (await statusesRecorded(stack.temporal, sessionId)).filter((status) => status === 'completed'),
      ).toEqual(['completed']);
    }
    const periodSessions = await stack.db
      .selectFrom('sessions')
      .select(['id', 'status'])
      .where('subscription_id', '=', row.id)
      .execute();
    expect(periodSessions.map((session) => session.status)).toEqual(Array(MONTHS).fill('completed'));
    const completedEvents = await stack.db
      .selectFrom('events')
      .select(['session_id'])
      .where('type', '=', 'session.completed')
      .where('session_id', 'in', sessionIds)
      .execute();
    expect(completedEvents.map((event) => event.session_id).sort()).toEqual([...sessionIds].sort());
    const renewed = await stack.db
      .selectFrom('events')
      .select(['payload'])
      .where('merchant_id', '=', row.merchant_id)
      .where('type', '=', 'subscription.renewed')
      .execute();
    expect(renewed).toHaveLength(MONTHS);
    expect(renewed.map((event) => JSON.parse(event.payload).data.session.id).sort()).toEqual(
      [...sessionIds].sort(),
    );
    expect(await usdcBalance(chain, customer.account as Address)).toBe(before - BigInt(MONTHS) * AMOUNT);
  }, 900_000);
});
