import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { createTestClient, getAddress, http, type Address, type Hex } from 'viem';
import { createChainMonitorActivities } from '../activities/chainMonitor';
import { createNetworkRegistry } from '../chain/networkRegistry';
import { networkByChainId } from '../config/networks';
import { loadConfig } from '../config';
import { MintFanout } from '../contracts/artifacts';
import { createDb, type Db } from '../db/client';
import { writeCheckpoint } from '../db/deposits';
import { upsertMerchantByWallet } from '../db/merchants';
import { ANVIL_DEV_ACCOUNTS } from '../dev/services/anvil';
import { benchWalletClient } from './lib/chainClients';
import { percentile } from './lib/percentiles';
import { reportBenchmark } from './lib/results';
import { machineLoad } from './lib/rounds';
import { startBenchServices } from './lib/services';
import { depositSignallerFor } from '../workflowClient/sessions';

/**
 * Deposit detection at mainnet volume: the monitor's scan cost per block as the number of watched deposit
 * addresses grows (10, 1,000, 10,000) under the same flood of unrelated USDC transfers, and at a fixed
 * 1,000 addresses under a light (20 transfers per block) and a heavy (2,000 per block) flood over the
 * same number of blocks. The cost should follow the addresses and stay flat in the flood. Each figure is
 * the median of several passes of `scanDeposits` over the range from a fresh checkpoint. Then the
 * detection latency in blocks: with blocks mined every 250 ms under the heavy flood and 10,000 watched
 * addresses, how many blocks after its inclusion a payment is recorded (the chain needs 3 confirmations).
 */
const CHAIN_ID = 11155111;
const RANGE_BLOCKS = 60;
const LIGHT_PER_BLOCK = 20;
const HEAVY_PER_BLOCK = 2_000;
const PASSES = 5;
const ADDRESS_COUNTS = [10, 1_000, 10_000];
const PAID_ADDRESSES = 10;

async function main(): Promise<void> {
  const machineAtStart = machineLoad();
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const services = await startBenchServices({ chains: true });
    cleanups.unshift(() => services.stop());
    const chain = services.chains.find((entry) => entry.chainId === CHAIN_ID)!;
    const usdc = chain.contracts.usdc!;
    const db = createDb({ connectionString: services.databaseUrl });
    cleanups.unshift(() => db.destroy().then(() => delay(300)));
    const connection = await Connection.connect({ address: services.temporalAddress });
    cleanups.unshift(() => connection.close());
    const temporal = new Client({ connection, namespace: services.temporalNamespace });
    const networks = createNetworkRegistry(loadConfig(services.env));
    const { scanDeposits } = createChainMonitorActivities({
      db,
      networks,
      signalDepositDetected: depositSignallerFor(temporal),
    });

    const generator = benchWalletClient(chain.rpcUrl, CHAIN_ID, ANVIL_DEV_ACCOUNTS[1]!.privateKey as Hex);
    const deployed = await generator.deployContract({
      abi: MintFanout.abi,
      bytecode: MintFanout.bytecode as Hex,
    });
    const fanout = (await generator.waitForTransactionReceipt({ hash: deployed })).contractAddress!;
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) });
    const strangers = Array.from({ length: 40 }, () => randomAddress());
    const mint = async (recipients: Address[], amount: bigint) => {
      const hash = await generator.writeContract({
        address: fanout,
        abi: MintFanout.abi,
        functionName: 'mintEach',
        args: [usdc, recipients, recipients.map(() => amount)],
        gas: 29_000_000n,
      });
      return (await generator.waitForTransactionReceipt({ hash })).blockNumber;
    };

    // 10,000 sessions seeded with one statement each; the first 10 addresses get paid in both ranges.
    const addresses = Array.from({ length: Math.max(...ADDRESS_COUNTS) }, () => randomAddress());
    const merchantWallet = randomAddress();
    const merchant = await upsertMerchantByWallet(db, {
      walletAddress: merchantWallet,
      payoutAddress: merchantWallet,
    });
    const sessionIds = addresses.map(() => randomUUID());
    const watch = async (count: number) => {
      // Watched = expiring in the future; the rest expired long before the late-payment window.
      await db
        .updateTable('sessions')
        .set({ expires_at: new Date(Date.now() + 3_600_000) })
        .where('id', 'in', sessionIds.slice(0, count))
        .execute();
      if (count < sessionIds.length)
        await db
          .updateTable('sessions')
          .set({ expires_at: new Date(Date.now() - 365 * 24 * 3_600_000) })
          .where('id', 'in', sessionIds.slice(count))
          .execute();
    };
    await seedSessions(db, { merchantId: merchant.id, payout: merchantWallet, usdc, addresses, sessionIds });

    const floodRange = async (perBlock: number) => {
      const batch = Array.from({ length: perBlock }, (_, index) => strangers[index % strangers.length]!);
      const first = (await generator.getBlockNumber({ cacheTime: 0 })) + 1n;
      for (let block = 0; block < RANGE_BLOCKS; block += 1) {
        if (block % (RANGE_BLOCKS / PAID_ADDRESSES) === 0)
          await mint([addresses[block / (RANGE_BLOCKS / PAID_ADDRESSES)]!], 1_000_000n);
        else await mint(batch, 1_000n);
      }
      return { first, last: await generator.getBlockNumber({ cacheTime: 0 }) };
    };
    const generationStarted = performance.now();
    const light = await floodRange(LIGHT_PER_BLOCK);
    const heavy = await floodRange(HEAVY_PER_BLOCK);
    await anvil.mine({ blocks: networkByChainId(CHAIN_ID)!.confirmations + 1 });
    const generationSec = (performance.now() - generationStarted) / 1000;

    /** Median ms per block of scanning [first, last] from a fresh checkpoint, with the deposits table cleared. */
    const costPerBlock = async ({ first, last }: { first: bigint; last: bigint }) => {
      const samples: number[] = [];
      let requests = 0;
      let logs = 0;
      for (let pass = 0; pass < PASSES; pass += 1) {
        await db
          .deleteFrom('deposits')
          .where('session_id', 'in', sessionIds.slice(0, PAID_ADDRESSES))
          .execute();
        const monitorId = `bench-${randomUUID()}`;
        await writeCheckpoint(db, { monitorId, chainId: CHAIN_ID, block: first - 1n });
        const started = performance.now();
        const result = await scanDeposits({
          chainId: CHAIN_ID,
          monitorId,
          maxBlockRange: Number(last - first + 1n),
        });
        samples.push((performance.now() - started) / Number(last - first + 1n));
        requests = result.requests;
        logs = result.logs;
      }
      return { msPerBlock: percentile(samples, 50), requests, logs };
    };

    const byAddresses: Record<string, Awaited<ReturnType<typeof costPerBlock>>> = {};
    for (const count of ADDRESS_COUNTS) {
      await watch(count);
      byAddresses[count] = await costPerBlock(heavy);
    }
    await watch(1_000);
    const lightFlood = await costPerBlock(light);
    const heavyFlood = await costPerBlock(heavy);

    // Detection latency: blocks every 250 ms, the monitor polling every 100 ms, 10,000 watched addresses.
    await watch(10_000);
    const monitorId = `bench-latency-${randomUUID()}`;
    await writeCheckpoint(db, {
      monitorId,
      chainId: CHAIN_ID,
      block: await generator.getBlockNumber({ cacheTime: 0 }),
    });
    let mining = true;
    const miner = (async () => {
      while (mining) {
        await anvil.mine({ blocks: 1 });
        await delay(250);
      }
    })();
    const latencies: number[] = [];
    for (let payment = 0; payment < 8; payment += 1) {
      const target = addresses[PAID_ADDRESSES + payment]!;
      const included = await mint([target], 1_000_000n);
      for (;;) {
        await scanDeposits({ chainId: CHAIN_ID, monitorId, maxBlockRange: 2_000 });
        const found = await db
          .selectFrom('deposits')
          .select('id')
          .where('deposit_address', '=', target)
          .executeTakeFirst();
        if (found) {
          latencies.push(Number((await generator.getBlockNumber({ cacheTime: 0 })) - included));
          break;
        }
        await delay(100);
      }
    }
    mining = false;
    await miner;

    const base = byAddresses[10]!.msPerBlock;
    reportBenchmark('monitorVolume', {
      machine: { atStart: machineAtStart, atEnd: machineLoad() },
      what: 'scanDeposits ms per scanned block: watched addresses 10 / 1k / 10k under a 2,000-transfer-per-block flood; 1k addresses under a 20 vs 2,000 per-block flood; detection latency in blocks',
      generationSec,
      rangeBlocks: RANGE_BLOCKS,
      byAddresses,
      lightFlood,
      heavyFlood,
      detectionLatencyBlocks: {
        p50: percentile(latencies, 50),
        max: Math.max(...latencies),
        confirmations: 3,
      },
      ratios: {
        'cost per block, 1k addresses / 10 addresses': byAddresses[1_000]!.msPerBlock / base,
        'cost per block, 10k addresses / 10 addresses': byAddresses[10_000]!.msPerBlock / base,
        'cost per block at 1k addresses, heavy flood / light flood (flat ≈ 1)':
          heavyFlood.msPerBlock / lightFlood.msPerBlock,
        'detection latency p50, blocks': percentile(latencies, 50),
      },
    });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

async function seedSessions(
  db: Db,
  {
    merchantId,
    payout,
    usdc,
    addresses,
    sessionIds,
  }: { merchantId: string; payout: Address; usdc: Address; addresses: Address[]; sessionIds: string[] },
) {
  const now = new Date();
  for (let start = 0; start < addresses.length; start += 2_000) {
    const ids = sessionIds.slice(start, start + 2_000);
    await db
      .insertInto('sessions')
      .values(
        ids.map((id) => ({
          id,
          merchant_id: merchantId,
          amount: '100',
          line_items: '[]',
          payment_option_symbols: ['USDC'],
          sandbox_mode: true,
          payout_address: payout,
          expires_at: new Date(now.getTime() + 3_600_000),
          created_at: now,
          updated_at: now,
          // Seeded rows, not sessions the API created: no reconciler may start workflows for them.
          workflow_started_at: now,
        })),
      )
      .execute();
    await db
      .insertInto('payment_options')
      .values(
        ids.map((id, index) => ({
          session_id: id,
          chain_id: CHAIN_ID,
          network: 'ethereum-sepolia',
          symbol: 'USDC',
          token_address: usdc,
          decimals: 6,
          amount: '100000000',
          deposit_address: addresses[start + index]!,
          payout_address: payout,
          session_expires_at: new Date(now.getTime() + 3_600_000),
        })),
      )
      .execute();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
