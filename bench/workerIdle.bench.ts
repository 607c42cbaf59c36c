import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { MAINNET_LIKE_TRAFFIC, startBackgroundTransfers } from '../dev/backgroundTransfers';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { LOCAL_SETTLEMENT_OPERATOR } from '../dev/chains/localSettlement';
import { ANVIL_DEV_ACCOUNTS } from '../dev/services/anvil';
import { getAddress } from 'viem';
import { createDb, type Db } from '../db/client';
import { upsertMerchantByWallet } from '../db/merchants';
import { seedWatchedOptions } from '../test/harness/watchedAddresses';
import { createSandboxSession, signUpBenchMerchant, type BenchMerchant } from './lib/merchantApi';
import { cpuSeconds, cpuSecondsByThreadName, serverProcessOf } from './lib/procStats';
import { reportBenchmark } from './lib/results';
import { machineLoad } from './lib/rounds';
import { startBenchServices, type BenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';
import { startWorkerProcess } from './lib/workerProcess';

/**
 * The worker's CPU when nothing is being paid (issue 40, item 6: the soak's idle worker used 12.6 % of a
 * core against a bound of 10 %). The production worker process with the operator key (every task queue,
 * the deposit monitors and receipt trackers of the three local chains, 1 s blocks, Ethereum-like background
 * traffic on the Ethereum stand-in, as in the soak), measured as its own process's CPU time (utime + stime
 * of its pid, so other load on the machine does not count) over two windows:
 *
 * - **chains only**: no session open or expiring; what the monitors and trackers cost per block;
 * - **expiring**: sessions created beforehand with staggered lives expire at EXPIRIES_PER_SEC (the soak's
 *   idle period: 1,456 in ten minutes, about 2.4/s), each a workflow timer, a status write and a
 *   `session.expired` event; what one expiry costs on top.
 *
 * The Ethereum stand-in watches WATCHED deposit addresses in the late window (seeded rows; the soak's 70-minute
 * load ended with 41,040), so its monitor reads every range unfiltered, 400 background logs a block, as the
 * soak's did.
 *
 * The steps run the same windows on fresh workers with the monitor cycle switched off
 * (CHAIN_MONITOR_CYCLE_MS=0: one scan per activity, the monitor's shape before it) and at its default, in
 * alternating order, so the ratio is read from one run. The CPU of each window is also split by thread
 * name (the main thread runs activities, the workflow threads replay workflow tasks, the Temporal core's
 * threads poll and complete them). WORKER_IDLE_PROFILE=1 writes a CPU profile of the worker's main
 * thread per window to WORKER_IDLE_PROFILE_DIR (default a temporary directory, printed).
 *
 *     npm run bench workerIdle
 */
const WINDOW_MS = Number(process.env.WORKER_IDLE_WINDOW_MS ?? 60_000);
const SETTLE_MS = Number(process.env.WORKER_IDLE_SETTLE_MS ?? 45_000);
const EXPIRIES_PER_SEC = 2.5;
/** The API's shortest session life: the first staggered expiry comes this long after creation starts, plus the creation time. */
const SHORTEST_LIFE_SEC = 60;
const CREATION_LEAD_SEC = 90;
const ETHEREUM_SEPOLIA = 11155111;
const TRAFFIC_ACCOUNT = ANVIL_DEV_ACCOUNTS[9]!;
const PROFILE = process.env.WORKER_IDLE_PROFILE === '1';
const PROFILE_SIGNAL = 'SIGTTIN';
const ROUNDS = Number(process.env.WORKER_IDLE_ROUNDS ?? 1);
const WATCHED = Number(process.env.WORKER_IDLE_WATCHED ?? 40_000);

interface Step {
  name: 'per-block' | 'cycle';
  env: Record<string, string>;
}
/** WORKER_IDLE_STEPS (comma-separated step names) runs only those, for a profile of one shape. */
const ALL_STEPS: Step[] = [
  { name: 'per-block', env: { CHAIN_MONITOR_CYCLE_MS: '0' } },
  { name: 'cycle', env: {} },
];
const STEPS = ALL_STEPS.filter(
  ({ name }) => !process.env.WORKER_IDLE_STEPS || process.env.WORKER_IDLE_STEPS.split(',').includes(name),
);

interface WindowFigures {
  cpuSec: number;
  seconds: number;
  /** Share of one core. */
  share: number;
  expired: number;
  byThread: Record<string, number>;
}

async function measureWindow(
  pid: number,
  ms: number,
  countExpired: () => Promise<number>,
): Promise<WindowFigures> {
  const expiredBefore = await countExpired();
  const threadsBefore = cpuSecondsByThreadName(pid);
  const before = cpuSeconds(pid);
  const startedAt = performance.now();
  if (PROFILE) process.kill(pid, PROFILE_SIGNAL);
  await delay(ms);
  if (PROFILE) process.kill(pid, PROFILE_SIGNAL);
  const cpuSec = cpuSeconds(pid) - before;
  const seconds = (performance.now() - startedAt) / 1000;
  const threadsAfter = cpuSecondsByThreadName(pid);
  const byThread: Record<string, number> = {};
  for (const [name, after] of threadsAfter) {
    const used = after - (threadsBefore.get(name) ?? 0);
    if (used > 0) byThread[name] = Math.round(used * 100) / 100;
  }
  return {
    cpuSec,
    seconds,
    share: cpuSec / seconds,
    expired: (await countExpired()) - expiredBefore,
    byThread,
  };
}

/** Worker CPU ms per expiry: the expiring window's CPU above the chains-only window's rate, per session expired. */
function msPerExpiry(chainsOnly: WindowFigures, expiring: WindowFigures): number | undefined {
  if (expiring.expired === 0) return undefined;
  return ((expiring.share - chainsOnly.share) * expiring.seconds * 1000) / expiring.expired;
}

/**
 * Sessions whose lives end EXPIRIES_PER_SEC apart over one window, starting CREATION_LEAD_SEC from now:
 * created now (the creation's own cost falls before the window), each with the life that puts its expiry
 * at its slot.
 */
async function createExpiringSessions(
  api: BenchTarget,
  merchant: BenchMerchant,
  count: number,
): Promise<{ firstExpiryAt: number }> {
  const firstExpiryAt = Date.now() + CREATION_LEAD_SEC * 1000;
  const pending: Promise<unknown>[] = [];
  for (let index = 0; index < count; index++) {
    const expiresAt = firstExpiryAt + (index * 1000) / EXPIRIES_PER_SEC;
    const expiresInSec = Math.max(SHORTEST_LIFE_SEC, Math.round((expiresAt - Date.now()) / 1000));
    pending.push(
      createSandboxSession(api.url, merchant, {
        amount: `${10 + (index % 90)}.${String(index % 100).padStart(2, '0')}`,
        symbols: ['USDC'],
        expiresInSec,
      }),
    );
    // A few in flight at a time: the API is not what this measures.
    if (pending.length >= 8) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  if (Date.now() + 5_000 > firstExpiryAt) throw new Error('creating the expiring sessions took too long');
  return { firstExpiryAt };
}

async function runStep(
  step: Step,
  world: { services: BenchServices; api: BenchTarget; merchant: BenchMerchant; db: Db; profileDir: string },
) {
  const worker = await startWorkerProcess({
    ...world.services.env,
    OPERATOR_PRIVATE_KEY: LOCAL_SETTLEMENT_OPERATOR.privateKey,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...step.env,
    ...(PROFILE && {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${join(__dirname, 'lib', 'cpuProfilePreload.cjs')}`,
      PROFILE_TARGETS: 'dev/worker.ts',
      PROFILE_SIGNAL,
      PROFILE_DIR: world.profileDir,
    }),
  });
  try {
    const countExpired = async () =>
      Number(
        (
          await sql<{
            count: string;
          }>`select count(*)::text as count from sessions where status = 'expired'`.execute(world.db)
        ).rows[0]!.count,
      );
    await delay(SETTLE_MS);
    const chainsOnly = await measureWindow(worker.pid, WINDOW_MS, countExpired);
    const { firstExpiryAt } = await createExpiringSessions(
      world.api,
      world.merchant,
      Math.round((WINDOW_MS / 1000) * EXPIRIES_PER_SEC),
    );
    await delay(firstExpiryAt - Date.now());
    const expiring = await measureWindow(worker.pid, WINDOW_MS, countExpired);
    // Every session of the window expired before the next step starts (their workflows are this worker's).
    const deadline = Date.now() + 120_000;
    while (
      Number(
        (
          await sql<{
            count: string;
          }>`select count(*)::text as count from sessions where status = 'awaiting_payment'`.execute(world.db)
        ).rows[0]!.count,
      ) > 0 &&
      Date.now() < deadline
    )
      await delay(1000);
    process.stdout.write(
      `workerIdle ${step.name}: chains only ${(chainsOnly.share * 100).toFixed(1)} % of a core ` +
        `${JSON.stringify(chainsOnly.byThread)}; expiring ${(expiring.share * 100).toFixed(1)} % ` +
        `(${expiring.expired} expired, ${msPerExpiry(chainsOnly, expiring)?.toFixed(1) ?? '–'} ms of CPU each) ` +
        `${JSON.stringify(expiring.byThread)}\n`,
    );
    return { step: step.name, chainsOnly, expiring };
  } finally {
    await worker.stop();
  }
}

async function main(): Promise<void> {
  const loadAtStart = machineLoad();
  const services = await startBenchServices({ chains: true, blockTime: 1 });
  const cleanups: (() => Promise<unknown>)[] = [() => services.stop()];
  try {
    const profileDir =
      process.env.WORKER_IDLE_PROFILE_DIR ?? (await mkdtemp(join(tmpdir(), 'stablepay-worker-idle-')));
    const sharedSecret = 'bench-worker-idle-shared-secret-0123456789abcdef';
    const signer = await startTarget('signer.ts', [], {
      ...services.env,
      SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
      SIGNER_SHARED_SECRET: sharedSecret,
    });
    cleanups.unshift(() => signer.stop());
    const api = await startTarget('api.ts', [], {
      ...services.env,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SIGNER_URL: signer.url,
      SIGNER_SHARED_SECRET: sharedSecret,
    });
    cleanups.unshift(() => api.stop());
    serverProcessOf(api.pid);
    const merchant = await signUpBenchMerchant(api.url);
    const ethereum = services.chains.find((chain) => chain.chainId === ETHEREUM_SEPOLIA)!;
    const background = await startBackgroundTransfers({
      rpcUrl: ethereum.rpcUrl,
      chainId: ETHEREUM_SEPOLIA,
      tokens: [ethereum.contracts.usdc!, ethereum.contracts.usdt!],
      senderPrivateKey: TRAFFIC_ACCOUNT.privateKey,
    });
    background.run(MAINNET_LIKE_TRAFFIC.ethereum.logsPerBlock);
    cleanups.unshift(() => background.stop());
    const db = createDb({ connectionString: services.databaseUrl, maxConnections: 1 });
    cleanups.unshift(() => db.destroy());
    if (WATCHED > 0) {
      const wallet = getAddress(`0x${'5eed'.repeat(10)}`);
      const owner = await upsertMerchantByWallet(db, { walletAddress: wallet, payoutAddress: wallet });
      await seedWatchedOptions(db, {
        chainId: ETHEREUM_SEPOLIA,
        network: 'ethereum-sepolia',
        tokenAddress: ethereum.contracts.usdc!,
        merchantId: owner.id,
        payoutAddress: wallet,
        count: WATCHED,
        tag: 'worker-idle',
      });
      await sql`vacuum analyze payment_options`.execute(db);
      await sql`vacuum analyze sessions`.execute(db);
    }

    const results: Awaited<ReturnType<typeof runStep>>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating order across rounds: neither step always runs first on a colder machine.
      const order = round % 2 === 0 ? STEPS : [...STEPS].reverse();
      for (const step of order)
        results.push(await runStep(step, { services, api, merchant, db, profileDir }));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const of = (name: Step['name']) => results.filter((result) => result.step === name);
    const summary = (name: Step['name']) => {
      const runs = of(name);
      const chainsOnly = median(runs.map((run) => run.chainsOnly.share));
      const expiring = median(runs.map((run) => run.expiring.share));
      const expired = median(runs.map((run) => run.expiring.expired));
      const expiringSec = median(runs.map((run) => run.expiring.seconds));
      return {
        chainsOnlyShare: chainsOnly,
        expiringShare: expiring,
        /** CPU ms per expiry: the expiring window's CPU above the chains-only window's, per session expired. */
        msPerExpiry: expired > 0 ? ((expiring - chainsOnly) * expiringSec * 1000) / expired : undefined,
      };
    };
    const profiles = PROFILE
      ? (await readdir(profileDir)).filter((file) => file.endsWith('.cpuprofile'))
      : [];
    if (PROFILE) process.stdout.write(`profiles in ${profileDir}: ${profiles.join(', ')}\n`);
    // One step alone (a profile of one shape) has no ratio to report.
    if (STEPS.length < ALL_STEPS.length) return;
    const before = summary('per-block');
    const after = summary('cycle');
    reportBenchmark('workerIdle', {
      ratios: {
        chainsOnlyCycleVsPerBlock: after.chainsOnlyShare / before.chainsOnlyShare,
        expiringCycleVsPerBlock: after.expiringShare / before.expiringShare,
      },
      goals: [
        {
          label: 'worker CPU, chains only + 2.5 expiries/s, share of a core',
          now: after.expiringShare,
          goal: { atMost: 0.1 },
          subject: `${(after.expiringShare * 100).toFixed(1)} % with the monitor cycle (chains only ${(after.chainsOnlyShare * 100).toFixed(1)} %)`,
          baseline: `${(before.expiringShare * 100).toFixed(1)} % one scan per activity (chains only ${(before.chainsOnlyShare * 100).toFixed(1)} %)`,
        },
      ],
      before,
      after,
      runs: results,
      windowMs: WINDOW_MS,
      watched: WATCHED,
      machine: { atStart: loadAtStart, atEnd: machineLoad() },
    });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
