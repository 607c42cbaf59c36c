import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { numberToHex, type Address } from 'viem';
import type { Delegation } from '../../chain/delegations';
import { createSessionEventActivities } from '../../activities/sessionEvents';
import { createSubscriptionActivities } from '../../activities/subscriptions';
import { createNetworkRegistry } from '../../chain/networkRegistry';
import { createOperatorChains, type OperatorChains } from '../../chain/operatorChains';
import type { StartAnvilChainsReturnType } from '../../dev/services/anvil';
import { subscriptionWorkflowId } from '../../workflows/workflowIds';
import { taskQueueNames } from '../../workflows/taskQueues';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';
import { usdcBalance, type LocalChain } from '../delegation/delegatorAccounts';
import { publicClientFor, rpc } from '../paymaster/smartAccounts';
import {
  TOKENS,
  forkedChainWithExecutor,
  newCustomer,
  periodicPermission,
  subscribeBodyOf,
  type Customer,
} from './subscriberWorld';

/**
 * Issue 42, money safety: the subscription's workflow reset from the Temporal UI to an earlier event never
 * charges a period twice. On the run's real Temporal server (a reset is the server's own operation; the
 * time-skipping server has none) and the real ERC20PeriodTransferEnforcer of a private fork of the local
 * chain, a reset is what the UI's "Reset" sends: `ResetWorkflowExecution` with the id of a workflow task's
 * completion. The period is charged, then its run is reset to the workflow task that scheduled the charge,
 * then to the first workflow task (before the period's session existed); and, separately, reset while the
 * charge's redemption is still in the mempool, so the reset run's charge runs beside the first one. Each
 * time: one charge row, one period session, the customer down by exactly one amount, one
 * `subscription.renewed`, no `subscription.payment_failed`, and one transaction from the executor.
 */

const AMOUNT = 10n * TOKENS;
const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Long = NonNullable<
  temporal.api.workflowservice.v1.IResetWorkflowExecutionRequest['workflowTaskFinishEventId']
>;

describe('a subscription workflow reset from the Temporal UI', () => {
  let app: TestApp;
  let fork: StartAnvilChainsReturnType;
  let chain: LocalChain;
  let executor: OperatorChains;
  let executorAddress: Address;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;
  let workerConnection: NativeConnection;
  const namespace = testStack().temporalNamespace;

  beforeAll(async () => {
    quietTemporalRuntime();
    const forked = await forkedChainWithExecutor();
    ({ fork, chain } = forked);
    const { executorKey } = forked;
    executorAddress = executorKey.address;
    const prefix = `reset-${randomUUID()}-`;
    app = await startTestApp({
      SUBSCRIPTION_EXECUTOR_ADDRESS: executorAddress,
      TEMPORAL_TASK_QUEUE_PREFIX: prefix,
      [`RPC_URL_${chain.chainId}`]: chain.rpcUrl,
    });
    const networks = createNetworkRegistry(app.config);
    executor = createOperatorChains({ networks, operatorPrivateKey: executorKey.key });
    client = new Client({
      connection: await Connection.connect({ address: testStack().temporalAddress }),
      namespace,
    });
    workerConnection = await NativeConnection.connect({ address: testStack().temporalAddress });
    // The workflow the api starts, on the queue it starts it on, with the real charging activities; a period
    // session's own workflow is not this test's subject (its start is counted, not run).
    worker = await Worker.create({
      connection: workerConnection,
      namespace,
      taskQueue: taskQueueNames(prefix).sessions,
      workflowsPath: require.resolve('../../workflows'),
      activities: {
        ...createSubscriptionActivities({
          db: app.db,
          networks,
          executor,
          startSessionWorkflow: async () => 'started',
        }),
        ...createSessionEventActivities({ db: app.db, startWebhookDelivery: async () => 'started' }),
      },
    });
    running = worker.run();
  }, 120_000);
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await workerConnection?.close();
    await client?.connection.close();
    await app?.close();
    await fork?.stop();
  });

  const chainClient = () => publicClientFor(chain.rpcUrl);
  const executorNonce = (blockTag: 'latest' | 'pending') =>
    chainClient().getTransactionCount({ address: executorAddress, blockTag });

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  interface Subscriber {
    customer: Customer;
    merchantId: string;
    planId: string;
    delegation: Delegation;
  }

  /** A merchant's monthly plan and a customer's signed permission for it (not yet sent). */
  async function subscriber(): Promise<Subscriber> {
    // The fork's clock at least ours: the permission starts a minute before it, the first period is due now.
    const latest = (await chainClient().getBlock()).timestamp;
    const ours = BigInt(Math.ceil(Date.now() / 1000));
    if (latest < ours) {
      await rpc(chain.rpcUrl, 'evm_setNextBlockTimestamp', [numberToHex(ours)]);
      await rpc(chain.rpcUrl, 'evm_mine', []);
    }
    const merchant = await signInNewMerchant(app);
    const sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    const plan = await app.request('/v1/plans', {
      method: 'POST',
      headers: sk,
      json: { name: 'Monthly', amount: '10', interval: 'month' },
    });
    const customer = await newCustomer(100n * TOKENS, chain);
    const delegation = await periodicPermission(customer, { executor: executorAddress, amount: AMOUNT });
    return { customer, merchantId: merchant.merchantId, planId: plan.body.id, delegation };
  }

  /** Sends the subscribe request (the api starts the workflow, on this test's worker's queue). */
  async function subscribed(prepared: Subscriber) {
    const response = await app.request(`/v1/subscribe/${prepared.planId}`, {
      method: 'POST',
      json: subscribeBodyOf(prepared.delegation),
    });
    expect(response.status).toBe(201);
    return { ...prepared, subscriptionId: response.body.id as string };
  }

  const historyOf = async (workflowId: string, runId: string): Promise<HistoryEvent[]> =>
    (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];

  /** The first run of the subscription's workflow (the one the api started: period 0). */
  async function firstRunOf(workflowId: string): Promise<string> {
    const { runId } = await client.workflow.getHandle(workflowId).describe();
    const [started] = await historyOf(workflowId, runId);
    return started!.workflowExecutionStartedEventAttributes!.firstExecutionRunId!;
  }

  const isChargeScheduled = (event: HistoryEvent) =>
    event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
    event.activityTaskScheduledEventAttributes?.activityType?.name === 'chargeSubscriptionPeriod';

  /** The workflow task completion that scheduled the period's charge (the charge's activity had not run). */
  async function chargeSchedulingTask(workflowId: string, runId: string): Promise<number> {
    const scheduled = (await historyOf(workflowId, runId)).find(isChargeScheduled)!;
    return Number(scheduled.activityTaskScheduledEventAttributes!.workflowTaskCompletedEventId);
  }

  /** The run's first workflow task completion: before the timer, the standing read and the period's session. */
  async function firstWorkflowTask(workflowId: string, runId: string): Promise<number> {
    const events = await historyOf(workflowId, runId);
    const completed = events.find(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    )!;
    return Number(completed.eventId);
  }

  /** What the UI's Reset sends; answers the reset run's id. */
  async function resetTo(
    workflowId: string,
    runId: string,
    workflowTaskFinishEventId: number,
  ): Promise<string> {
    const reset = (await client.workflowService.resetWorkflowExecution({
      namespace,
      workflowExecution: { workflowId, runId },
      reason: 'reset from the UI (test)',
      // An int64 on the wire; protobufjs takes a number (the type names only its Long).
      workflowTaskFinishEventId: workflowTaskFinishEventId as unknown as Long,
      requestId: randomUUID(),
    })) as temporal.api.workflowservice.v1.IResetWorkflowExecutionResponse;
    return reset.runId!;
  }

  const eventTypesOf = async (merchantId: string) =>
    (
      await app.db
        .selectFrom('events')
        .select('type')
        .where('merchant_id', '=', merchantId)
        .orderBy('created_at')
        .orderBy('id')
        .execute()
    ).map((event) => event.type);

  /**
   * The reset run charged its period and went on to the next (continued as new), or reported a failed
   * charge (which waits a day to try again): either way its period is settled for the test.
   */
  async function resetRunSettled(workflowId: string, runId: string, merchantId: string): Promise<void> {
    await until(
      async () => ({
        status: (await client.workflow.getHandle(workflowId, runId).describe()).status.name,
        failed: (await eventTypesOf(merchantId)).includes('subscription.payment_failed'),
      }),
      ({ status, failed }) => status === 'CONTINUED_AS_NEW' || failed,
    );
  }

  async function expectChargedOnce(
    {
      customer,
      subscriptionId,
      merchantId,
    }: { customer: Customer; subscriptionId: string; merchantId: string },
    { txHash, executorNonceAfterCharge }: { txHash: string; executorNonceAfterCharge: number },
  ) {
    const charges = await app.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', subscriptionId)
      .execute();
    expect(charges).toMatchObject([
      { period_index: 0, status: 'redeemed', tx_hash: txHash, failed_attempts: 0 },
    ]);
    const sessions = await app.db
      .selectFrom('sessions')
      .select('id')
      .where('subscription_id', '=', subscriptionId)
      .execute();
    expect(sessions.map((session) => session.id)).toEqual([charges[0]!.session_id]);
    expect(await usdcBalance(chain, customer.account)).toBe(100n * TOKENS - AMOUNT);
    expect(await eventTypesOf(merchantId)).toEqual(['subscription.created', 'subscription.renewed']);
    // The executor asked once: no second redemption was sent, not even one the enforcer would refuse.
    expect(await executorNonce('pending')).toBe(executorNonceAfterCharge);
  }

  it('reset to before the charge, then to before the period’s session: the period stays charged once', async () => {
    const subscription = await subscribed(await subscriber());
    const workflowId = subscriptionWorkflowId(subscription.subscriptionId);
    const firstRun = await until(
      async () => firstRunOf(workflowId).catch(() => undefined),
      (runId) => runId !== undefined,
    );
    // Period 0 charged and recorded: the run went on to period 1 (waiting a month on its timer).
    await resetRunSettled(workflowId, firstRun!, subscription.merchantId);
    const [charge] = await app.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', subscription.subscriptionId)
      .execute();
    const charged = { txHash: charge!.tx_hash!, executorNonceAfterCharge: await executorNonce('pending') };
    await expectChargedOnce(subscription, charged);

    for (const point of [chargeSchedulingTask, firstWorkflowTask]) {
      const eventId = await point(workflowId, firstRun!);
      const resetRun = await resetTo(workflowId, firstRun!, eventId);
      await resetRunSettled(workflowId, resetRun, subscription.merchantId);
      // The reset run did charge the period again (its activity ran after the reset point) and found it charged.
      const rescheduled = (await historyOf(workflowId, resetRun)).filter(isChargeScheduled);
      expect(rescheduled).toHaveLength(1);
      expect(Number(rescheduled[0]!.eventId)).toBeGreaterThan(eventId);
      await expectChargedOnce(subscription, charged);
    }
    await client.workflow.getHandle(workflowId).terminate('test over');
  });

  it('reset while the redemption is in the mempool: the reset run’s charge waits for it and sends nothing', async () => {
    const prepared = await subscriber();
    const nonceBefore = await executorNonce('latest');
    // Blocks are mined only when the test says: the first charge's redemption stays pending.
    await rpc(chain.rpcUrl, 'evm_setAutomine', [false]);
    try {
      const subscription = await subscribed(prepared);
      const workflowId = subscriptionWorkflowId(subscription.subscriptionId);
      await until(
        () => executorNonce('pending'),
        (pending) => pending === nonceBefore + 1,
      );
      const firstRun = await firstRunOf(workflowId);
      const resetRun = await resetTo(workflowId, firstRun, await chargeSchedulingTask(workflowId, firstRun));

      // The reset run's charge ran beside the first (still waiting for its receipt): it either sent a second
      // redemption, or failed its attempt and waits to try again.
      const beside = await until(
        async () => ({
          pending: await executorNonce('pending'),
          retried: (
            await client.workflow.getHandle(workflowId, resetRun).describe()
          ).raw.pendingActivities?.find(
            (activity) =>
              activity.activityType?.name === 'chargeSubscriptionPeriod' && (activity.attempt ?? 0) > 1,
          ),
        }),
        ({ pending, retried }) => pending > nonceBefore + 1 || retried !== undefined,
      );
      expect(beside.pending).toBe(nonceBefore + 1);
      // Turned away by the first attempt's claim on the period before it read the chain — not saved by a node
      // that happens to estimate the second redemption's gas on its pending state (anvil does; geth uses the
      // latest block, where the second redemption still looks payable).
      expect(beside.retried!.lastFailure?.applicationFailureInfo?.type).toBe('PeriodChargeInFlight');
      await rpc(chain.rpcUrl, 'evm_mine', []);
      await rpc(chain.rpcUrl, 'evm_setAutomine', [true]);
      await resetRunSettled(workflowId, resetRun, subscription.merchantId);

      const [charge] = await app.db
        .selectFrom('subscription_charges')
        .selectAll()
        .where('subscription_id', '=', subscription.subscriptionId)
        .execute();
      await expectChargedOnce(subscription, {
        txHash: charge!.tx_hash!,
        executorNonceAfterCharge: nonceBefore + 1,
      });
      await client.workflow.getHandle(workflowId).terminate('test over');
    } finally {
      await rpc(chain.rpcUrl, 'evm_setAutomine', [true]);
    }
  });
});
