import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createChainMonitorActivities, type ScanResult } from '../../activities/chainMonitor';
import { HeadCadence } from '../../chain/headCadence';
import { createNetworkRegistry } from '../../chain/networkRegistry';
import { loadConfig } from '../../config';
import { createDb, type Db } from '../../db/client';
import { readCheckpoint, writeCheckpoint } from '../../db/deposits';
import { startLocalChains, type LocalChains } from '../../dev/services/localChains';
import { writeDeploymentsFile } from '../harness/deployments';
import { testStack } from '../harness/stack';
import { testChainClient } from '../settlement/settlementStack';
import { startCappedRpcProxy, type CappedRpcProxy } from './cappedRpcProxy';

/**
 * Adaptive head polling in the monitor (chain/headCadence.ts, docs/decisions.md "Adaptive head polling"):
 * a chain of this file's own, mining at an interval anvil is told (and changes, and stops), and the
 * monitor's activity run as the worker runs it (a cycle of ranges inside one activity). The RPC goes
 * through a proxy that counts the head polls. Whatever the cadence does, every block from the checkpoint
 * on is scanned, in contiguous ranges.
 */
const CHAIN_ID = 11155111;

/** One head poll the monitor made: whether the cadence timed it by the learned interval, and whether it saw a new block. */
interface Poll {
  adaptive: boolean;
  newBlock: boolean;
}

/**
 * The monitor's own cadence, recording each poll. A poll after a wait is adaptive when the cadence timed that
 * wait by the interval; a poll asked at once (the first of a scan) when the cadence was adaptive then.
 */
class WatchedCadence extends HeadCadence {
  readonly polls: Poll[] = [];
  private scheduledAdaptively: boolean | undefined;
  private lastHead: bigint | undefined;

  override nextPollDelay(now: number): number {
    this.scheduledAdaptively = this.adaptive;
    return super.nextPollDelay(now);
  }

  override notePoll(head: bigint, sentAt: number, answeredAt: number): void {
    const adaptive = this.scheduledAdaptively ?? this.adaptive;
    this.scheduledAdaptively = undefined;
    const newBlock = this.lastHead !== undefined && head > this.lastHead;
    if (this.lastHead === undefined || head > this.lastHead) this.lastHead = head;
    this.polls.push({ adaptive, newBlock });
    super.notePoll(head, sentAt, answeredAt);
  }
}

describe('adaptive head polling: the deposit monitor on an interval-mining chain', () => {
  let chains: LocalChains;
  let proxy: CappedRpcProxy;
  let db: Db;
  let chain: ReturnType<typeof testChainClient>;
  let confirmations: number;
  let monitor: ReturnType<typeof createChainMonitorActivities>;
  const cadences = new Map<string, WatchedCadence>();
  const cadenceOf = (monitorId: string): WatchedCadence => {
    let cadence = cadences.get(monitorId);
    if (!cadence) cadences.set(monitorId, (cadence = new WatchedCadence({ headPollMs: 250 })));
    return cadence;
  };

  beforeAll(async () => {
    // Deployed while anvil mines each transaction at once; interval mining is switched on per test.
    chains = await startLocalChains({ chainIds: [CHAIN_ID] });
    const deployment = chains.chains[0]!;
    proxy = await startCappedRpcProxy(deployment.rpcUrl, { maxBlocks: 2_000, maxLogs: 10_000 });
    chain = testChainClient(deployment.rpcUrl, CHAIN_ID);
    db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 2 });
    const networks = createNetworkRegistry(
      loadConfig({
        DEPLOYMENTS_FILE: writeDeploymentsFile(chains.chains),
        [`RPC_URL_${CHAIN_ID}`]: proxy.url,
      }),
    );
    confirmations = networks.byChainId(CHAIN_ID)!.confirmations;
    monitor = createChainMonitorActivities({
      db,
      networks,
      // No session is paid here: nothing to signal.
      signalDepositDetected: async () => undefined,
      // The filtered form, whatever else the run's database watches on the chain: this file is about the head.
      filteredMaxWatched: 1_000_000_000,
      cycleMs: 8_000,
      headCadenceOf: cadenceOf,
    });
  }, 300_000);

  afterAll(async () => {
    await proxy?.close();
    await db?.destroy();
    await chains?.stop();
  });

  const head = () => chain.getBlockNumber({ cacheTime: 0 });
  /** One monitor activity (a cycle of ranges), as the worker runs it. */
  const cycle = (monitorId: string): Promise<ScanResult> =>
    new MockActivityEnvironment().run(monitor.scanDeposits, {
      chainId: CHAIN_ID,
      monitorId,
      maxBlockRange: 100,
      waitForBlockMs: 1_000,
    });
  async function newMonitor(): Promise<{ monitorId: string; from: bigint }> {
    const monitorId = `cadence-${randomBytes(4).toString('hex')}`;
    const from = (await head()) - BigInt(confirmations);
    await writeCheckpoint(db, { monitorId, chainId: CHAIN_ID, block: from });
    return { monitorId, from };
  }
  /** Every cycle's ranges follow the previous one's, from just past `from`. */
  function expectContiguous(from: bigint, cycles: ScanResult[]) {
    let next = from + 1n;
    for (const result of cycles) {
      if (result.ranges === 0) continue;
      expect(BigInt(result.fromBlock)).toBe(next);
      next = BigInt(result.toBlock) + 1n;
    }
    return next - 1n;
  }

  it('on a chain mining every second, a monitor that has learned the beat asks for the head about twice a block while the chain keeps it, and scans every block', async () => {
    await chain.setIntervalMining({ interval: 1 });
    try {
      const { monitorId, from } = await newMonitor();
      // The first cycles learn the interval (five timestamps, then four steady blocks).
      const cycles = [await cycle(monitorId), await cycle(monitorId)];
      const cadence = cadenceOf(monitorId);
      const learnedAt = cadence.polls.length;
      const requestsBefore = proxy.stats.headRequests;
      // A loaded machine (a late block, a late timer) sends the cadence back to the fixed poll until the chain
      // is steady for four blocks again: the claim is about the polls the learned interval timed, so cycles go
      // on until they have seen enough blocks (each cycle is 8 s, about 8 blocks).
      const adaptiveBlocks = () =>
        cadence.polls.slice(learnedAt).filter((poll) => poll.adaptive && poll.newBlock).length;
      for (let timed = 0; timed < 6 && (timed === 0 || adaptiveBlocks() < 6); timed++)
        cycles.push(await cycle(monitorId));
      const measured = cadence.polls.slice(learnedAt);
      // Every head request the monitor made went through its cadence.
      expect(proxy.stats.headRequests - requestsBefore).toBe(measured.length);
      const adaptive = measured.filter((poll) => poll.adaptive);
      expect(adaptiveBlocks()).toBeGreaterThanOrEqual(6);
      expect(adaptive.length / adaptiveBlocks()).toBeLessThan(3);
      const last = expectContiguous(from, cycles);
      expect(last).toBe(await readCheckpoint(db, monitorId));
      // Caught up: the cycle ended within a block or two of the safe head.
      expect((await head()) - BigInt(confirmations) - last).toBeLessThanOrEqual(2n);
    } finally {
      await chain.setAutomine(true);
    }
  }, 180_000);

  it('blocks faster than learned, then a chain that stops mining and restarts: every block is scanned, in contiguous ranges, and the monitor is caught up at the end', async () => {
    await chain.setIntervalMining({ interval: 2 });
    try {
      const { monitorId, from } = await newMonitor();
      const cycles = [await cycle(monitorId)];
      // Learned at 2 s; now every second (faster than learned), in the middle of a cycle.
      const running = cycle(monitorId);
      await delay(1_500);
      await chain.setIntervalMining({ interval: 1 });
      cycles.push(await running);
      // Stopped for 4 s (no block at all), then mining every second again, in the middle of a cycle.
      const stopped = cycle(monitorId);
      await delay(1_000);
      await chain.setAutomine(true);
      const stoppedAt = await head();
      await delay(4_000);
      expect(await head()).toBe(stoppedAt);
      await chain.setIntervalMining({ interval: 1 });
      cycles.push(await stopped);
      cycles.push(await cycle(monitorId));
      const last = expectContiguous(from, cycles);
      expect(last).toBe(await readCheckpoint(db, monitorId));
      expect(last).toBeGreaterThan(stoppedAt - BigInt(confirmations));
      expect((await head()) - BigInt(confirmations) - last).toBeLessThanOrEqual(2n);
    } finally {
      await chain.setAutomine(true);
    }
  }, 120_000);
});
