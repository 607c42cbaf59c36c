import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
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
import { heapAfterGcProbe } from './lib/heapAfterGc';
import { createSandboxSession, paymentOptionOf, signUpBenchMerchant } from './lib/merchantApi';
import { residentMiB } from './lib/procStats';
import { reportBenchmark } from './lib/results';
import { machineLoad } from './lib/rounds';
import { startBenchServices, type BenchServices } from './lib/services';
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
 *    BENCH_SUBSCRIPTIONS=0 leaves parts 1 and 2 out (part 3 alone).
 * 2. The same number of plain sessions (POST /v1/sessions) each paid by one USDC transfer from one payer:
 *    from the first session's creation to the last transfer mined. The ratio of the two is the figure.
 * 3. Memory with many subscriptions waiting on their next period's timer: subscription workflows started at
 *    each of WAITING_SIZES (cumulative), timers 30 days out. Once the worker has run the last one's first
 *    task: the worker's RSS and its used heap after a forced GC (5 samples each), the Temporal dev server's
 *    RSS and its store's size on disk, each also per 1,000 waiting against the step before. The dev server
 *    keeps its store in a SQLite file (BENCH_TEMPORAL_STORE=memory for its in-memory default, which held
 *    19.4 GiB near 100,000 workflows). A memory guard stops the run with a message, never the machine:
 *    before a step whose projected server RSS (its slope so far) would pass BENCH_TEMPORAL_MAX_MIB, and
 *    during a step as soon as the server passes it or the machine's available memory falls below
 *    BENCH_MIN_AVAILABLE_MIB.
 */
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1000);
const CUSTOMERS = 10;
const CHAIN_ID = 84532;
const AMOUNT = 10_000_000n; // 10 USDC
const DAY_SEC = 86_400n;
const CONCURRENCY = 16;
/** Cumulative counts of waiting subscriptions (BENCH_WAITING_SIZES=2000,10000,100000 for the 100,000). */
const WAITING_SIZES = (process.env.BENCH_WAITING_SIZES ?? '2000,10000').split(',').map(Number);
/**
 * Workflow starts in flight at once for part 3, one figure per step (the last one for the steps after it,
 * so `128,512` compares two in one run). Each start is one round trip to the server, which persists it;
 * 32 in flight gave about 37 starts a second on a loaded machine.
 */
const START_CONCURRENCY = (process.env.BENCH_START_CONCURRENCY ?? '128').split(',').map(Number);
const TEMPORAL_STORE = (process.env.BENCH_TEMPORAL_STORE ?? 'file') as 'memory' | 'file';
/** The most the Temporal dev server may hold resident, projected or reached (MiB). */
const TEMPORAL_MAX_MIB = Number(process.env.BENCH_TEMPORAL_MAX_MIB ?? 8192);
/** The least memory the machine must keep available (MemAvailable, MiB) while part 3 runs. */
const MIN_AVAILABLE_MIB = Number(process.env.BENCH_MIN_AVAILABLE_MIB ?? 3072);
const RSS_SAMPLES = 5;
/** A progress line on stderr every this many starts (a 100,000 step runs for many minutes). */
const PROGRESS_EVERY = 10_000;

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

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** What the machine can still give (MemAvailable), MiB. */
function availableMiB(): number {
  const match = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** The size of the dev server's SQLite store (file and write-ahead log), MiB; 0 in memory. */
function storeMiB(dbFile: string | undefined): number {
  if (dbFile === undefined) return 0;
  let bytes = 0;
  for (const suffix of ['', '-wal', '-shm'])
    bytes += statSync(`${dbFile}${suffix}`, { throwIfNoEntry: false })?.size ?? 0;
  return bytes / 1_048_576;
}

class MemoryBoundError extends Error {
  override name = 'MemoryBoundError';
}

/**
 * Watches the Temporal dev server's RSS and the machine's available memory once a second while part 3
 * runs; `check()` throws once either bound is crossed, so the starts stop and the services are stopped
 * before the kernel's OOM killer would pick a process.
 */
function memoryGuard(temporalPid: number) {
  let problem: string | undefined;
  let peakTemporalMiB = 0;
  let leastAvailableMiB = Number.POSITIVE_INFINITY;
  const timer = setInterval(() => {
    const temporalMiB = residentMiB(temporalPid) ?? 0;
    const available = availableMiB();
    peakTemporalMiB = Math.max(peakTemporalMiB, temporalMiB);
    leastAvailableMiB = Math.min(leastAvailableMiB, available);
    if (problem !== undefined) return;
    if (temporalMiB > TEMPORAL_MAX_MIB)
      problem = `the Temporal dev server holds ${temporalMiB.toFixed(0)} MiB, above BENCH_TEMPORAL_MAX_MIB=${TEMPORAL_MAX_MIB}`;
    else if (available < MIN_AVAILABLE_MIB)
      problem = `the machine has ${available.toFixed(0)} MiB available, below BENCH_MIN_AVAILABLE_MIB=${MIN_AVAILABLE_MIB}`;
  }, 1_000);
  return {
    check() {
      if (problem !== undefined) throw new MemoryBoundError(problem);
    },
    peaks: () => ({ peakTemporalMiB, leastAvailableMiB }),
    stop: () => clearInterval(timer),
  };
}

interface ChargingContext {
  url: string;
  deployment: BenchServices['chains'][number];
  executor: (typeof ANVIL_DEV_ACCOUNTS)[number];
  payer: (typeof ANVIL_DEV_ACCOUNTS)[number];
  databaseUrl: string;
  cleanups: (() => Promise<unknown>)[];
}

/** Parts 1 and 2: SUBSCRIPTIONS charges due at once against as many plain sessions paid by transfer. */
async function measureCharging({ url, deployment, executor, payer, databaseUrl, cleanups }: ChargingContext) {
  const chain = deployment as unknown as LocalChain;
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
  const db = createDb({ connectionString: databaseUrl, maxConnections: 2 });
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
    if (performance.now() - chargeStarted > 20 * 60_000) throw new Error(`only ${redeemed} charges redeemed`);
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
  return {
    setup: { subscribeSec, subscribeRetries },
    charged: { exactlyOnce, charges: charges.length, sessions: sessions.length, chargeSec },
    plain: { sessions: SUBSCRIPTIONS, plainSec },
  };
}

interface WaitingStep {
  waiting: number;
  /** Starts in flight at once in this step. */
  inFlight?: number;
  /** From the step's first start to its last acknowledged by the server. */
  startSec: number;
  /** From the step's first start to the worker having run the last one's first task (its timer set). */
  drainSec: number;
  startsPerSec?: number;
  /** Workflows brought to their timer a second, end to end (started and their first task run). */
  waitingPerSec?: number;
  workerRssMiB: number[];
  workerHeapAfterGcMiB: number[];
  temporalRssMiB: number[];
  /** The dev server's SQLite file and its log on disk (0 for the in-memory store). */
  temporalStoreMiB: number;
  availableMiB: number;
  /** Growth per 1,000 more waiting since the step before (medians). */
  perThousand?: {
    workerRssMiB: number;
    workerHeapAfterGcMiB: number;
    temporalRssMiB: number;
    temporalStoreMiB: number;
  };
}

/** Part 3: subscription workflows waiting on their timers, WAITING_SIZES cumulative, under the memory guard. */
async function measureWaiting({
  temporal,
  workerPid,
  temporalPid,
  temporalDbFile,
  heap,
  steps,
}: {
  temporal: Client;
  workerPid: number;
  temporalPid: number;
  temporalDbFile: string | undefined;
  heap: Awaited<ReturnType<typeof heapAfterGcProbe>>;
  /** Filled as the steps are measured, so a stopped run still shows what it reached. */
  steps: WaitingStep[];
}) {
  const guard = memoryGuard(temporalPid);
  try {
    const sample = async (
      waiting: number,
      timing: Pick<WaitingStep, 'inFlight' | 'startSec' | 'drainSec' | 'startsPerSec' | 'waitingPerSec'>,
    ) => {
      const workerRssMiB: number[] = [];
      const temporalRssMiB: number[] = [];
      for (let index = 0; index < RSS_SAMPLES; index++) {
        workerRssMiB.push(residentMiB(workerPid) ?? Number.NaN);
        temporalRssMiB.push(residentMiB(temporalPid) ?? Number.NaN);
        await delay(2_000);
      }
      const { samplesMiB } = await heap.measure(workerPid, { samples: RSS_SAMPLES, gapMs: 500 });
      const step: WaitingStep = {
        waiting,
        ...timing,
        workerRssMiB,
        workerHeapAfterGcMiB: samplesMiB,
        temporalRssMiB,
        temporalStoreMiB: storeMiB(temporalDbFile),
        availableMiB: availableMiB(),
      };
      const before = steps.at(-1);
      if (before !== undefined) {
        const per = (now: number[], then: number[]) =>
          ((median(now) - median(then)) / (waiting - before.waiting)) * 1000;
        step.perThousand = {
          workerRssMiB: per(step.workerRssMiB, before.workerRssMiB),
          workerHeapAfterGcMiB: per(step.workerHeapAfterGcMiB, before.workerHeapAfterGcMiB),
          temporalRssMiB: per(step.temporalRssMiB, before.temporalRssMiB),
          temporalStoreMiB:
            ((step.temporalStoreMiB - before.temporalStoreMiB) / (waiting - before.waiting)) * 1000,
        };
      }
      steps.push(step);
      process.stderr.write(
        `waiting ${waiting}: worker ${median(workerRssMiB).toFixed(0)} MiB resident, ` +
          `${median(samplesMiB).toFixed(1)} MiB heap after GC; Temporal ${median(temporalRssMiB).toFixed(0)} MiB ` +
          `resident, store ${step.temporalStoreMiB.toFixed(0)} MiB; ${step.availableMiB.toFixed(0)} MiB available\n`,
      );
    };

    await sample(0, { startSec: 0, drainSec: 0 });
    const farDue = Date.now() + 30 * 86_400_000;
    for (const size of WAITING_SIZES) {
      const last = steps.at(-1)!;
      const first = steps[0]!;
      // Refuse a step the server's growth so far says it would not survive (from the second step on).
      if (last.waiting > 0) {
        const serverSlope = (median(last.temporalRssMiB) - median(first.temporalRssMiB)) / last.waiting;
        const workerSlope = Math.max(
          0,
          (median(last.workerRssMiB) - median(first.workerRssMiB)) / last.waiting,
        );
        const more = size - last.waiting;
        const projectedServer = median(last.temporalRssMiB) + serverSlope * more;
        const projectedAvailable = availableMiB() - (serverSlope + workerSlope) * more;
        if (projectedServer > TEMPORAL_MAX_MIB || projectedAvailable < MIN_AVAILABLE_MIB)
          throw new MemoryBoundError(
            `not starting the step to ${size} waiting: at ${(serverSlope * 1000).toFixed(1)} MiB per 1,000 so far ` +
              `the Temporal dev server would hold about ${projectedServer.toFixed(0)} MiB ` +
              `(BENCH_TEMPORAL_MAX_MIB=${TEMPORAL_MAX_MIB}) and the machine keep about ` +
              `${projectedAvailable.toFixed(0)} MiB available (BENCH_MIN_AVAILABLE_MIB=${MIN_AVAILABLE_MIB})`,
          );
      }
      const started = performance.now();
      const ids = Array.from({ length: size - last.waiting }, () => randomUUID());
      let acknowledged = 0;
      const inFlight = START_CONCURRENCY[Math.min(steps.length - 1, START_CONCURRENCY.length - 1)]!;
      await inBatches(ids, inFlight, async (subscriptionId) => {
        guard.check();
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
        if (++acknowledged % PROGRESS_EVERY === 0) {
          const sec = (performance.now() - started) / 1000;
          process.stderr.write(
            `  ${last.waiting + acknowledged}/${size} started, ${(acknowledged / sec).toFixed(0)}/s; Temporal ` +
              `${(residentMiB(temporalPid) ?? 0).toFixed(0)} MiB, worker ${(residentMiB(workerPid) ?? 0).toFixed(0)} MiB, ` +
              `${availableMiB().toFixed(0)} MiB available\n`,
          );
        }
      });
      const startSec = (performance.now() - started) / 1000;
      // The worker ran the last one's first task (its timer is set): the backlog before it is done too.
      const lastHandle = temporal.workflow.getHandle(subscriptionWorkflowId(ids.at(-1)!));
      const drainDeadline = Date.now() + 30 * 60_000;
      for (;;) {
        guard.check();
        const { raw } = await lastHandle.describe();
        if (!raw.pendingWorkflowTask && Number(raw.workflowExecutionInfo?.historyLength ?? 0) >= 5) break;
        if (Date.now() > drainDeadline)
          throw new Error(
            `the worker had not run the first task of the last of ${size} workflows in 30 minutes`,
          );
        await delay(500);
      }
      const drainSec = (performance.now() - started) / 1000;
      await sample(size, {
        inFlight,
        startSec,
        drainSec,
        startsPerSec: ids.length / startSec,
        waitingPerSec: ids.length / drainSec,
      });
    }
    return guard.peaks();
  } finally {
    guard.stop();
  }
}

async function main() {
  const cleanups: (() => Promise<unknown>)[] = [];
  // What was measured before a memory bound stopped the run.
  const partial: { charging?: unknown; memory: WaitingStep[] } = { memory: [] };
  try {
    const loadAtStart = machineLoad();
    const services = await startBenchServices({ chains: true, blockTime: 1, temporalStore: TEMPORAL_STORE });
    cleanups.unshift(() => services.stop());
    const deployment = services.chains.find((chain) => chain.chainId === CHAIN_ID)!;
    const executor = ANVIL_DEV_ACCOUNTS[6]!;
    const payer = ANVIL_DEV_ACCOUNTS[1]!;
    const env = {
      ...services.env,
      SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: executor.privateKey,
      SUBSCRIPTION_EXECUTOR_ADDRESS: executor.address,
    };
    const heap = await heapAfterGcProbe();
    const [worker, apiTarget] = await Promise.all([
      startWorkerProcess({ ...env, ...heap.env() }),
      startTarget('api.ts', [], env),
    ]);
    cleanups.unshift(() => worker.stop());
    cleanups.unshift(() => apiTarget.stop());

    const charging =
      SUBSCRIPTIONS > 0
        ? await measureCharging({
            url: apiTarget.url,
            deployment,
            executor,
            payer,
            databaseUrl: services.databaseUrl,
            cleanups,
          })
        : undefined;
    partial.charging = charging;

    const connection = await Connection.connect({ address: services.temporalAddress });
    cleanups.unshift(() => connection.close());
    const temporal = new Client({ connection, namespace: services.temporalNamespace });
    const memory = partial.memory;
    const peaks = await measureWaiting({
      temporal,
      workerPid: worker.pid,
      temporalPid: services.temporalPid,
      temporalDbFile: services.temporalDbFile,
      heap,
      steps: memory,
    });
    const largest = memory.at(-1)!.perThousand!;

    reportBenchmark('subscriptions', {
      setup: {
        subscriptions: SUBSCRIPTIONS,
        customers: CUSTOMERS,
        chain: `${CHAIN_ID} stand-in, 1 s blocks (interval mining)`,
        worker: 'dev/worker.ts process with SUBSCRIPTION_EXECUTOR_PRIVATE_KEY (one executor key)',
        ...charging?.setup,
        waitingSizes: WAITING_SIZES,
        startConcurrency: START_CONCURRENCY,
        temporalStore: TEMPORAL_STORE,
        temporalMaxMiB: TEMPORAL_MAX_MIB,
        minAvailableMiB: MIN_AVAILABLE_MIB,
      },
      charged: charging?.charged,
      plain: charging?.plain,
      memory,
      memoryPeaks: peaks,
      machine: { atStart: loadAtStart, atEnd: machineLoad() },
      ratios: {
        ...(charging
          ? { chargeAllOverPlainSessions: charging.charged.chargeSec / charging.plain.plainSec }
          : {}),
        // Between the last two sizes (the first step's is against none waiting).
        workerRssMiBPerThousandWaiting: largest.workerRssMiB,
        workerHeapAfterGcMiBPerThousandWaiting: largest.workerHeapAfterGcMiB,
        temporalRssMiBPerThousandWaiting: largest.temporalRssMiB,
        temporalStoreMiBPerThousandWaiting: largest.temporalStoreMiB,
      },
    });
  } catch (error) {
    if (error instanceof MemoryBoundError)
      process.stderr.write(
        `\nStopped by the memory guard, not measured to the end: ${error.message}\n` +
          `Measured before it: ${JSON.stringify(partial, null, 2)}\n`,
      );
    throw error;
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
