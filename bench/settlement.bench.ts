import { setTimeout as delay } from 'node:timers/promises';
import { erc20Abi, type Address } from 'viem';
import { createLogger } from '../logging/logger';
import { LOCAL_RELAYER, LOCAL_SETTLEMENT_OPERATOR } from '../dev/chains/localSettlement';
import { networkByChainId } from '../config/networks';
import { TestStablecoin } from '../contracts/artifacts';
import { relayerChainsOf, startRelayer, type Relayer } from '../dev/relayer';
import { ANVIL_DEV_ACCOUNTS } from '../dev/services/anvil';
import { watchBlocks, type BlockWatcher } from './lib/blockWatcher';
import { benchWalletClient, type BenchWalletClient } from './lib/chainClients';
import {
  createSandboxSession,
  paymentOptionOf,
  readSessionStatus,
  signUpBenchMerchant,
  type BenchMerchant,
} from './lib/merchantApi';
import { percentile, summariseLatencies } from './lib/percentiles';
import { reportBenchmark } from './lib/results';
import { machineLoad } from './lib/rounds';
import { startBenchServices, type BenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';
import { startWorkerProcess, type WorkerProcess } from './lib/workerProcess';

/**
 * Deposit-to-status latency of the settlement pipeline, against the chain's block time: local chains
 * with interval mining (1 s blocks, as in the dev stack), the production worker entrypoint
 * (workers/main.ts with the operator key: settlement activities and the deposit monitors, at the
 * configured poll interval), the API in its own process, and the local relayer for bridged payments.
 *
 * Payments arrive open-loop, one every 1.3 s (create session → USDC transfer of its amount into its
 * deposit address), whatever is still settling: several sessions settle at once, as in production.
 * The interval is no multiple of the block time or the monitor's poll, so the inclusions sample the
 * monitor's phase instead of landing in lockstep. Five payer accounts take turns, so a payer's next
 * transfer comes 6.5 s after its last one (long included): no transfer waits behind another's nonce.
 * One warm-up payment per series is not counted.
 *
 * Measured from the transfer's inclusion — when the bench first saw its block (eth_blockNumber every
 * 50 ms) — to the first observation of each status in the status view (GET /v1/sessions/:id/status
 * every 50 ms per session in flight). "confirming" counts the first status at or past it.
 */
const BLOCK_TIME_SEC = 1;
const PAYMENTS_PER_SERIES = 20;
/** Anvil accounts 1–5 pay; 0 deployed the contracts, 7 is the settlement operator, 8 the relayer. */
const PAYER_ACCOUNTS = [1, 2, 3, 4, 5].map((index) => ANVIL_DEV_ACCOUNTS[index]!);
const ARRIVAL_INTERVAL_MS = 1300;
const STATUS_POLL_MS = 50;
const PAYMENT_TIMEOUT_MS = 90_000;
const PAYER_FUNDS = 1_000_000n * 10n ** 6n;

const SERIES = [
  {
    key: 'ethSepolia',
    chainId: 11155111,
    what: 'USDC on the Ethereum Sepolia stand-in: forwarder, swap and stake on the same chain',
  },
  {
    key: 'baseSepolia',
    chainId: 84532,
    what: 'USDC on the Base Sepolia stand-in: forwarder, swap, bridge (local relayer), stake on Ethereum Sepolia',
  },
] as const;

interface Observation {
  atMs: number;
  /** The chain's head (as the block watcher knew it) at that moment. */
  headBlock: bigint;
}

interface Payment {
  sessionId: string;
  chainId: number;
  payer: Address;
  inclusionBlock?: bigint;
  inclusionAtMs?: number;
  confirming?: Observation;
  bridging?: Observation;
  completed?: Observation;
  failure?: string;
}

const AT_OR_PAST_CONFIRMING = new Set(['confirming', 'bridging', 'completed']);

/** Polls the status view of every payment in flight, recording the first observation of each status. */
function startStatusPoller(apiUrl: string, watchers: Map<number, BlockWatcher>) {
  const inFlight = new Set<Payment>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      await Promise.all(
        [...inFlight].map(async (payment) => {
          let status: string;
          try {
            status = await readSessionStatus(apiUrl, payment.sessionId);
          } catch (error) {
            // The API's per-client rate limit answers a busy poller 429: ask again next round (a later
            // observation can only make the figures worse, never better).
            if (error instanceof Error && / answered 429/.test(error.message)) return;
            payment.failure = `status view: ${error instanceof Error ? error.message : String(error)}`;
            inFlight.delete(payment);
            return;
          }
          const observation = { atMs: performance.now(), headBlock: watchers.get(payment.chainId)!.head() };
          if (AT_OR_PAST_CONFIRMING.has(status)) payment.confirming ??= observation;
          if (status === 'bridging') payment.bridging ??= observation;
          if (status === 'completed') payment.completed ??= observation;
          if (status === 'failed' || status === 'expired') payment.failure = `session ${status}`;
          if (payment.completed || payment.failure) inFlight.delete(payment);
        }),
      );
      await delay(Math.max(0, STATUS_POLL_MS - (performance.now() - started)));
    }
  })();
  return {
    track(payment: Payment) {
      inFlight.add(payment);
    },
    async finished(payment: Payment, timeoutMs: number): Promise<void> {
      const deadline = performance.now() + timeoutMs;
      while (!payment.completed && !payment.failure) {
        if (performance.now() > deadline) {
          inFlight.delete(payment);
          payment.failure = `not completed within ${timeoutMs} ms`;
          break;
        }
        await delay(STATUS_POLL_MS);
      }
      if (payment.failure)
        throw new Error(`session ${payment.sessionId} on chain ${payment.chainId}: ${payment.failure}`);
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

type StatusPoller = ReturnType<typeof startStatusPoller>;

interface World {
  services: BenchServices;
  api: BenchTarget;
  merchant: BenchMerchant;
  watchers: Map<number, BlockWatcher>;
  poller: StatusPoller;
}

/** One payment: a new session, a USDC transfer of its amount into its deposit address, then completion. */
async function pay(
  world: World,
  payer: BenchWalletClient,
  chainId: number,
  amount: string,
): Promise<Payment> {
  const session = await createSandboxSession(world.api.url, world.merchant, { amount, symbols: ['USDC'] });
  const option = paymentOptionOf(session, chainId, 'USDC');
  const payment: Payment = { sessionId: session.id, chainId, payer: payer.account.address };
  world.poller.track(payment);
  const hash = await payer.writeContract({
    address: option.tokenAddress,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [option.depositAddress, BigInt(option.amount)],
  });
  const receipt = await payer.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`transfer ${hash} reverted`);
  payment.inclusionBlock = receipt.blockNumber;
  payment.inclusionAtMs = await world.watchers.get(chainId)!.seenAt(receipt.blockNumber);
  await world.poller.finished(payment, PAYMENT_TIMEOUT_MS);
  return payment;
}

async function runSeries(world: World, payers: BenchWalletClient[], chainId: number) {
  await pay(world, payers[0]!, chainId, '1.00'); // warm-up, not counted
  const started = performance.now();
  const payments = await Promise.all(
    Array.from({ length: PAYMENTS_PER_SERIES }, async (_, index) => {
      await delay(index * ARRIVAL_INTERVAL_MS);
      return pay(world, payers[index % payers.length]!, chainId, `${10 + index}.25`);
    }),
  );
  return { payments, wallSec: (performance.now() - started) / 1000 };
}

function describeSeries(payments: Payment[]) {
  const fromInclusion = (observation: Observation | undefined, payment: Payment) =>
    observation!.atMs - payment.inclusionAtMs!;
  const blocksAfter = (observation: Observation | undefined, payment: Payment) =>
    Number(observation!.headBlock - payment.inclusionBlock!);
  const bridged = payments.filter((payment) => payment.bridging);
  const blockFigures = (values: number[]) => ({ p50: percentile(values, 50), p95: percentile(values, 95) });
  return {
    depositToConfirming: summariseLatencies(
      payments.map((payment) => fromInclusion(payment.confirming, payment)),
    ),
    depositToCompleted: summariseLatencies(
      payments.map((payment) => fromInclusion(payment.completed, payment)),
    ),
    ...(bridged.length
      ? {
          depositToBridging: summariseLatencies(
            bridged.map((payment) => fromInclusion(payment.bridging, payment)),
          ),
          bridgingObserved: bridged.length,
        }
      : {}),
    blocksAfterInclusionAtConfirming: blockFigures(
      payments.map((payment) => blocksAfter(payment.confirming, payment)),
    ),
    blocksAfterInclusionAtCompleted: blockFigures(
      payments.map((payment) => blocksAfter(payment.completed, payment)),
    ),
    perPayment: payments.map((payment) => ({
      sessionId: payment.sessionId,
      payer: payment.payer,
      inclusionBlock: Number(payment.inclusionBlock),
      confirmingMs: Math.round(fromInclusion(payment.confirming, payment)),
      ...(payment.bridging ? { bridgingMs: Math.round(fromInclusion(payment.bridging, payment)) } : {}),
      completedMs: Math.round(fromInclusion(payment.completed, payment)),
    })),
  };
}

async function main(): Promise<void> {
  const cleanups: (() => Promise<unknown>)[] = [];
  let worker: WorkerProcess | undefined;
  try {
    const loadAtStart = machineLoad();
    const setupStarted = performance.now();
    const services = await startBenchServices({ chains: true, blockTime: BLOCK_TIME_SEC });
    cleanups.unshift(() => services.stop());
    const rpcUrlOf = (chainId: number) => services.chains.find((chain) => chain.chainId === chainId)!.rpcUrl;

    const [workerStart, apiStart] = await Promise.allSettled([
      startWorkerProcess({ ...services.env, OPERATOR_PRIVATE_KEY: LOCAL_SETTLEMENT_OPERATOR.privateKey }),
      startTarget('api.ts', [], services.env),
    ]);
    if (workerStart.status === 'fulfilled') {
      worker = workerStart.value;
      cleanups.unshift(() => workerStart.value.stop());
    }
    if (apiStart.status === 'fulfilled') cleanups.unshift(() => apiStart.value.stop());
    if (workerStart.status === 'rejected') throw workerStart.reason;
    if (apiStart.status === 'rejected') throw apiStart.reason;
    const api = apiStart.value;
    const relayer: Relayer = await startRelayer({
      chains: relayerChainsOf(services),
      relayerPrivateKey: LOCAL_RELAYER.privateKey,
      logger: createLogger({ level: 'warn', name: 'relayer' }),
    });
    cleanups.unshift(() => relayer.stop());

    const watchers = new Map<number, BlockWatcher>();
    for (const { chainId } of SERIES) watchers.set(chainId, await watchBlocks(rpcUrlOf(chainId)));
    cleanups.unshift(() => Promise.all([...watchers.values()].map((watcher) => watcher.stop())));
    const poller = startStatusPoller(api.url, watchers);
    cleanups.unshift(() => poller.stop());
    const merchant = await signUpBenchMerchant(api.url);
    const world: World = { services, api, merchant, watchers, poller };
    const setupSec = (performance.now() - setupStarted) / 1000;

    const results: Record<string, unknown> = {};
    const ratios: Record<string, number> = {};
    const goals: {
      label: string;
      now: number;
      goal: { atMost: number };
      subject: string;
      baseline: string;
    }[] = [];
    const blockTimeMs = BLOCK_TIME_SEC * 1000;
    for (const series of SERIES) {
      const seriesStarted = performance.now();
      const usdc = services.chains.find((chain) => chain.chainId === series.chainId)!.contracts.usdc!;
      const payers = PAYER_ACCOUNTS.map((account) =>
        benchWalletClient(rpcUrlOf(series.chainId), series.chainId, account.privateKey),
      );
      const mints = await Promise.all(
        payers.map((payer) =>
          payer.writeContract({
            address: usdc,
            abi: TestStablecoin.abi,
            functionName: 'mint',
            args: [payer.account.address, PAYER_FUNDS],
          }),
        ),
      );
      await Promise.all(mints.map((hash, index) => payers[index]!.waitForTransactionReceipt({ hash })));

      const { payments, wallSec } = await runSeries(world, payers, series.chainId);
      const withFundingAndWarmUpSec = (performance.now() - seriesStarted) / 1000;
      const figures = describeSeries(payments);
      results[series.key] = {
        what: series.what,
        chainId: series.chainId,
        confirmations: networkByChainId(series.chainId)!.confirmations,
        wallSec,
        withFundingAndWarmUpSec,
        ...figures,
      };
      const confirmations = networkByChainId(series.chainId)!.confirmations;
      goals.push({
        label: `deposit → confirming, p95 blocks after inclusion (${series.key}, ${confirmations} confirmations)`,
        now: figures.blocksAfterInclusionAtConfirming.p95,
        goal: { atMost: confirmations + 1 },
        subject: `p95 ${figures.blocksAfterInclusionAtConfirming.p95} blocks, ${(figures.depositToConfirming.p95Ms / 1000).toFixed(2)} s (p50 ${figures.blocksAfterInclusionAtConfirming.p50} blocks)`,
        baseline: `${confirmations} confirmations of ${BLOCK_TIME_SEC} s blocks`,
      });
      ratios[`${series.key}ConfirmingP50InBlockTimes`] = figures.depositToConfirming.p50Ms / blockTimeMs;
      ratios[`${series.key}ConfirmingP95InBlockTimes`] = figures.depositToConfirming.p95Ms / blockTimeMs;
      ratios[`${series.key}CompletedP50InBlockTimes`] = figures.depositToCompleted.p50Ms / blockTimeMs;
      ratios[`${series.key}CompletedP95InBlockTimes`] = figures.depositToCompleted.p95Ms / blockTimeMs;
    }

    reportBenchmark('settlement', {
      setup: {
        blockTimeSec: BLOCK_TIME_SEC,
        paymentsPerSeries: PAYMENTS_PER_SERIES,
        arrivals: `open loop, one payment every ${ARRIVAL_INTERVAL_MS} ms (create session, transfer), ${PAYER_ACCOUNTS.length} payer accounts in turn`,
        warmUpPaymentsPerSeries: 1,
        statusPollMs: STATUS_POLL_MS,
        inclusion: 'first observation of the transfer block by an eth_blockNumber poll every 50 ms',
        worker:
          'workers/main.ts process, OPERATOR_PRIVATE_KEY set, config defaults (CHAIN_MONITOR_POLL_MS 2000: the longest a scan waits for the next block, head polled every 250 ms; CHAIN_MONITOR_MAX_BLOCK_RANGE 2000)',
        relayer: 'dev/relayer.ts startRelayer in the bench process, default poll 500 ms',
        api: 'bench/targets/api.ts process',
        setupSec,
      },
      ...results,
      machine: { atStart: loadAtStart, atEnd: machineLoad() },
      ratios,
      goals,
    });
  } catch (error) {
    if (worker) process.stderr.write(`worker output (tail):\n${worker.output().slice(-8000)}\n`);
    throw error;
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
