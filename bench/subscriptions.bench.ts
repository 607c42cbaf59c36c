import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { erc20Abi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ROOT_AUTHORITY } from '../chain/delegations';
import { periodTransferCaveat } from '../chain/periodicTransfers';
import { createDb } from '../db/client';
import { ANVIL_DEV_ACCOUNTS } from '../dev/services/anvil';
import { subscriptionWorkflow } from '../workflows/subscription';
import { TASK_QUEUES } from '../workflows/taskQueues';
import { subscriptionWorkflowId } from '../workflows/workflowIds';
import {
  deployFundedDeleGator,
  frameworkOn,
  signDelegation,
  type LocalChain,
} from '../test/delegation/delegatorAccounts';
import { benchWalletClient } from './lib/chainClients';
import { createSandboxSession, paymentOptionOf, signUpBenchMerchant } from './lib/merchantApi';
import { residentMiB } from './lib/procStats';
import { reportBenchmark } from './lib/results';
import { machineLoad } from './lib/rounds';
import { startBenchServices } from './lib/services';
import { startTarget } from './lib/target';
import { startWorkerProcess } from './lib/workerProcess';

/**
 * Subscriptions at scale (issue 42 acceptance), on the production worker process (dev/worker.ts with
 * SUBSCRIPTION_EXECUTOR_PRIVATE_KEY), the API in its own process, a local chain with 1 s blocks:
 *
 * 1. SUBSCRIPTIONS subscriptions (POST /v1/subscribe, daily plan, USDC on the Base Sepolia stand-in) whose
 *    permissions all start at the same moment, so every first charge is due in the same second. Measured:
 *    from the due time to the last charge redeemed (each a period session plus a redemption sent by the
 *    one executor key). Checked from the database: exactly one charge and one session per subscription,
 *    every charge redeemed; and on chain: each customer down by exactly its subscriptions × the amount.
 * 2. The same number of plain sessions (POST /v1/sessions) each paid by one USDC transfer from one payer:
 *    from the first session's creation to the last transfer mined. The ratio of the two is the figure.
 * 3. The worker's resident memory with many subscriptions waiting on their next period's timer: subscription
 *    workflows started at each of WAITING_SIZES (cumulative), timers 30 days out; RSS sampled several times
 *    once the worker has run each workflow's first task.
 */
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1000);
const CUSTOMERS = 10;
const CHAIN_ID = 84532;
const AMOUNT = 10_000_000n; // 10 USDC
const DAY_SEC = 86_400n;
const CONCURRENCY = 16;
/** Cumulative counts of waiting subscriptions (BENCH_WAITING_SIZES=2000,100000 for the 100,000). */
const WAITING_SIZES = (process.env.BENCH_WAITING_SIZES ?? '2000,10000').split(',').map(Number);
/**
 * Workflow starts in flight at once for part 3. Each start is one round trip to the server, which
 * persists it; 32 in flight gave about 37 starts a second on a loaded machine.
 */
const START_CONCURRENCY = Number(process.env.BENCH_START_CONCURRENCY ?? 128);
const RSS_SAMPLES = 5;

async function inBatches<T, R>(
  items: T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
) {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}

async function api(
  url: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown } = {},
) {
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function rssSamples(pid: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < RSS_SAMPLES; i++) {
    samples.push(residentMiB(pid) ?? Number.NaN);
    await delay(2_000);
  }
  return samples;
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const loadAtStart = machineLoad();
    const services = await startBenchServices({ chains: true, blockTime: 1 });
    cleanups.unshift(() => services.stop());
    const deployment = services.chains.find((chain) => chain.chainId === CHAIN_ID)!;
    const chain = deployment as unknown as LocalChain;
    const executor = ANVIL_DEV_ACCOUNTS[6]!;
    const payer = ANVIL_DEV_ACCOUNTS[1]!;
    const env = {
      ...services.env,
      SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: executor.privateKey,
      SUBSCRIPTION_EXECUTOR_ADDRESS: executor.address,
    };
    const [worker, apiTarget] = await Promise.all([startWorkerProcess(env), startTarget('api.ts', [], env)]);
    cleanups.unshift(() => worker.stop());
    cleanups.unshift(() => apiTarget.stop());
    const url = apiTarget.url;
    const merchant = await signUpBenchMerchant(url);
    const sk = { authorization: merchant.secretKeyAuthorization };
    const plan = await api(url, '/v1/plans', {
      method: 'POST',
      headers: sk,
      json: { name: 'Daily', amount: '10', interval: 'day' },
    });

    // Customers, each with SUBSCRIPTIONS / CUSTOMERS permissions (one subscription each) all starting at `due`.
    const perCustomer = SUBSCRIPTIONS / CUSTOMERS;
    const customers = await Promise.all(
      Array.from({ length: CUSTOMERS }, async () => {
        const owner = privateKeyToAccount(generatePrivateKey());
        const { account } = await deployFundedDeleGator(chain, owner.address, BigInt(perCustomer) * AMOUNT);
        return { owner, account: account.address };
      }),
    );
    const wallet = benchWalletClient(deployment.rpcUrl, CHAIN_ID, payer.privateKey as Hex);
    const chainNow = (await wallet.getBlock()).timestamp;
    // Far enough ahead for every subscribe request to be answered first (about 20 a second here).
    const due = chainNow + 60n + BigInt(Math.ceil(SUBSCRIPTIONS / 10));
    const framework = frameworkOn(chain);
    const subscribeStarted = performance.now();
    let subscribeRetries = 0;
    const subscriptionIds = await inBatches(
      Array.from({ length: SUBSCRIPTIONS }, (_, index) => index),
      CONCURRENCY,
      async (index) => {
        const customer = customers[index % CUSTOMERS]!;
        const delegation = await signDelegation(
          customer.owner,
          {
            delegate: executor.address as Address,
            delegator: customer.account,
            authority: ROOT_AUTHORITY,
            caveats: [
              periodTransferCaveat(framework, {
                token: deployment.contracts.usdc!,
                periodAmount: AMOUNT,
                periodDuration: DAY_SEC,
                startTime: due,
              }),
            ],
            salt: BigInt(index + 1),
          },
          chain,
        );
        // The body as the subscribe page sends it (the salt as a decimal string); sent again on a 503, as
        // the answer asks (the workflow's start timed out on a loaded machine; the subscription is saved).
        for (let attempt = 1; ; attempt++) {
          try {
            const subscribed = await api(url, `/v1/subscribe/${plan.id as string}`, {
              method: 'POST',
              json: {
                chainId: CHAIN_ID,
                token: 'USDC',
                delegation: { ...delegation, salt: delegation.salt.toString() },
              },
            });
            return subscribed.id as string;
          } catch (error) {
            if (attempt >= 5 || !String(error).includes('answered 503')) throw error;
            subscribeRetries++;
          }
        }
      },
    );
    const subscribeSec = (performance.now() - subscribeStarted) / 1000;
    const latest = (await wallet.getBlock()).timestamp;
    if (latest >= due) throw new Error(`subscribing took past the due time (${latest} ≥ ${due})`);

    // 1. Every charge due at `due`: wait for the last one redeemed.
    const db = createDb({ connectionString: services.databaseUrl, maxConnections: 2 });
    cleanups.unshift(() => db.destroy());
    const dueWallMs = Number(due) * 1000;
    while (Date.now() < dueWallMs) await delay(200);
    const chargeStarted = performance.now();
    let redeemed = 0;
    while (redeemed < SUBSCRIPTIONS) {
      await delay(250);
      const row = await db
        .selectFrom('subscription_charges')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('status', '=', 'redeemed')
        .executeTakeFirstOrThrow();
      redeemed = Number(row.count);
      if (performance.now() - chargeStarted > 20 * 60_000)
        throw new Error(`only ${redeemed} charges redeemed`);
    }
    const chargeSec = (performance.now() - chargeStarted) / 1000;
    const charges = await db
      .selectFrom('subscription_charges')
      .select(['subscription_id', 'period_index', 'status', 'session_id'])
      .execute();
    const sessions = await db
      .selectFrom('sessions')
      .select(['id', 'subscription_id'])
      .where('subscription_id', 'is not', null)
      .execute();
    const perSubscription = new Map<string, number>();
    for (const charge of charges)
      perSubscription.set(charge.subscription_id, (perSubscription.get(charge.subscription_id) ?? 0) + 1);
    const sessionsPer = new Map<string, number>();
    for (const session of sessions)
      sessionsPer.set(session.subscription_id!, (sessionsPer.get(session.subscription_id!) ?? 0) + 1);
    const exactlyOnce = subscriptionIds.every(
      (id) => perSubscription.get(id) === 1 && sessionsPer.get(id) === 1,
    );
    const balances = await Promise.all(
      customers.map((customer) =>
        wallet.readContract({
          address: deployment.contracts.usdc!,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [customer.account],
        }),
      ),
    );
    const everyCustomerPaidExactly = balances.every((balance) => balance === 0n);
    if (!exactlyOnce || charges.length !== SUBSCRIPTIONS || !everyCustomerPaidExactly) {
      throw new Error(
        `not charged exactly once: ${charges.length} charges, ${sessions.length} sessions, balances ${balances.join(',')}`,
      );
    }

    // 2. The same number of plain sessions, each paid by one transfer from one payer.
    await wallet
      .writeContract({
        address: deployment.contracts.usdc!,
        abi: [
          {
            type: 'function',
            name: 'mint',
            stateMutability: 'nonpayable',
            inputs: [{ type: 'address' }, { type: 'uint256' }],
            outputs: [],
          },
        ],
        functionName: 'mint',
        args: [payer.address as Address, BigInt(SUBSCRIPTIONS) * AMOUNT],
      })
      .then((hash) => wallet.waitForTransactionReceipt({ hash }));
    const plainStarted = performance.now();
    let nonce = await wallet.getTransactionCount({ address: payer.address as Address, blockTag: 'pending' });
    const hashes = await inBatches(
      Array.from({ length: SUBSCRIPTIONS }, (_, index) => index),
      CONCURRENCY,
      async () => {
        const session = await createSandboxSession(url, merchant, { amount: '10', symbols: ['USDC'] });
        const option = paymentOptionOf(session, CHAIN_ID, 'USDC');
        return wallet.writeContract({
          address: option.tokenAddress,
          abi: erc20Abi,
          functionName: 'transfer',
          args: [option.depositAddress, BigInt(option.amount)],
          nonce: nonce++,
        });
      },
    );
    await Promise.all(hashes.map((hash) => wallet.waitForTransactionReceipt({ hash, timeout: 600_000 })));
    const plainSec = (performance.now() - plainStarted) / 1000;

    // 3. The worker's memory with subscriptions waiting on their timers.
    const connection = await Connection.connect({ address: services.temporalAddress });
    cleanups.unshift(() => connection.close());
    const temporal = new Client({ connection, namespace: services.temporalNamespace });
    const workerPid = worker.pid;
    const memory: { waiting: number; rssMiB: number[]; startSec: number; startsPerSec?: number }[] = [
      { waiting: 0, rssMiB: await rssSamples(workerPid), startSec: 0 },
    ];
    let waiting = 0;
    const farDue = Date.now() + 30 * 86_400_000;
    for (const size of WAITING_SIZES) {
      const started = performance.now();
      const ids = Array.from({ length: size - waiting }, () => randomUUID());
      await inBatches(ids, START_CONCURRENCY, async (subscriptionId) => {
        await temporal.workflow.start(subscriptionWorkflow, {
          workflowId: subscriptionWorkflowId(subscriptionId),
          taskQueue: TASK_QUEUES.sessions,
          args: [
            {
              subscriptionId,
              schedule: { firstDueMs: farDue, periodMs: 86_400_000, enforcerStartMs: farDue },
              periodIndex: 0,
            },
          ],
        });
      });
      // The worker ran the last one's first task (its timer is set): the backlog before it is done too.
      const last = temporal.workflow.getHandle(subscriptionWorkflowId(ids.at(-1)!));
      for (;;) {
        const { raw } = await last.describe();
        if (!raw.pendingWorkflowTask && Number(raw.workflowExecutionInfo?.historyLength ?? 0) >= 5) break;
        await delay(500);
      }
      const startSec = (performance.now() - started) / 1000;
      waiting = size;
      memory.push({
        waiting,
        rssMiB: await rssSamples(workerPid),
        startSec,
        startsPerSec: ids.length / startSec,
      });
    }
    const [small, large] = [memory.at(-2)!, memory.at(-1)!];
    const mibPerThousand =
      ((median(large.rssMiB) - median(small.rssMiB)) / (large.waiting - small.waiting)) * 1000;

    reportBenchmark('subscriptions', {
      setup: {
        subscriptions: SUBSCRIPTIONS,
        customers: CUSTOMERS,
        chain: `${CHAIN_ID} stand-in, 1 s blocks (interval mining)`,
        worker: 'dev/worker.ts process with SUBSCRIPTION_EXECUTOR_PRIVATE_KEY (one executor key)',
        subscribeSec,
        subscribeRetries,
        waitingSizes: WAITING_SIZES,
        startConcurrency: START_CONCURRENCY,
      },
      charged: { exactlyOnce, charges: charges.length, sessions: sessions.length, chargeSec },
      plain: { sessions: SUBSCRIPTIONS, plainSec },
      memory,
      machine: { atStart: loadAtStart, atEnd: machineLoad() },
      ratios: {
        chargeAllOverPlainSessions: chargeSec / plainSec,
        workerRssMiBPerThousandWaiting: mibPerThousand,
      },
    });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
