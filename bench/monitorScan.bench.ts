import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import {
  createPublicClient,
  createTestClient,
  getAddress,
  http,
  pad,
  parseAbiItem,
  toEventSelector,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Pool } from 'pg';
import { createChainMonitorActivities, DEFAULT_ADDRESSES_PER_REQUEST } from '../activities/chainMonitor';
import { createNetworkRegistry } from '../chain/networkRegistry';
import { networkByChainId } from '../config/networks';
import { loadConfig } from '../config';
import { MintFanout } from '../contracts/artifacts';
import { createDb } from '../db/client';
import type { Database } from '../db/schema';
import { writeCheckpoint } from '../db/deposits';
import { upsertMerchantByWallet } from '../db/merchants';
import { ANVIL_DEV_ACCOUNTS } from '../dev/services/anvil';
import { benchWalletClient } from './lib/chainClients';
import {
  createSandboxSession,
  paymentOptionOf,
  signUpBenchMerchant,
  type PaymentOption,
} from './lib/merchantApi';
import { percentile } from './lib/percentiles';
import { reportBenchmark } from './lib/results';
import { machineLoad } from './lib/rounds';
import { startBenchServices } from './lib/services';
import { startTarget } from './lib/target';
import { depositSignallerFor } from '../workflowClient/sessions';

/**
 * Transfer logs per second through the deposit monitor's scan step — `scanDeposits` called directly:
 * safe head, checkpoint, eth_getLogs with decoding, deposit-address lookup, deposit rows, accepted
 * totals, Temporal signals, checkpoint write — against a raw eth_getLogs loop (no decoding, nothing
 * else) over the same blocks with the same chunking, in the same run, on one anvil chain.
 *
 * The range: 500 blocks × 10 USDC Transfer logs (a MintFanout call per block mints to 10 recipients),
 * 5,000 logs, every one into a watched deposit address (the monitor asks only for those: the `to`
 * topic filter, so "the same logs" are these). 100 of them pay 50 real sandbox sessions created
 * through the API, each in two halves (the first is recorded as underpaid, the second covers the
 * amount and signals the session's workflow); the other 4,900 go to the deposit addresses of 450
 * seeded sessions (one INSERT each for sessions and options, no workflows), about 11 small transfers
 * each that never cover the amount: accepted deposit rows, no signal. Every pass starts from a fresh
 * checkpoint key and an empty deposits table, so each does the same work. The baseline sends the
 * monitor's own requests raw: the token addresses, the Transfer topic and the watched `to` list.
 */
const CHAIN_ID = 11155111;
const BLOCKS = 500;
const LOGS_PER_BLOCK = 10;
const SESSIONS = 50;
/** One session transfer every this many logs: 5,000 / 50 = 100 (two per session). */
const SESSION_TRANSFER_EVERY = 50;
const MAX_BLOCK_RANGE = 100;
const MEASURED_PASSES = 9;
/** Seeded sessions whose deposit addresses receive the other 4,900 transfers (with the 50: 500 watched, one `to` list). */
const SEEDED_SESSIONS = 450;
/** A seeded session's expected amount: no sum of its small transfers reaches it. */
const SEEDED_AMOUNT = 100_000_000_000n;

const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const TRANSFER_TOPIC = toEventSelector(transferEvent);

/** Recipients and amounts of the 5,000 transfers, in order: sessions' deposit addresses spread evenly among random ones. */
function plannedTransfers(options: PaymentOption[], seeded: Address[]): { to: Address; amount: bigint }[] {
  const total = BLOCKS * LOGS_PER_BLOCK;
  return Array.from({ length: total }, (_, index) => {
    if (index % SESSION_TRANSFER_EVERY === SESSION_TRANSFER_EVERY / 2) {
      const slot = Math.floor(index / SESSION_TRANSFER_EVERY);
      const option = options[slot % options.length]!;
      const half = BigInt(option.amount) / 2n;
      return {
        to: option.depositAddress,
        amount: slot < options.length ? half : BigInt(option.amount) - half,
      };
    }
    return { to: seeded[index % seeded.length]!, amount: BigInt(1 + (index % 997)) * 1000n };
  });
}

async function main(): Promise<void> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const loadAtStart = machineLoad();
    const services = await startBenchServices({ chains: true });
    cleanups.unshift(() => services.stop());
    const chain = services.chains.find((entry) => entry.chainId === CHAIN_ID)!;
    const api = await startTarget('api.ts', [], services.env);
    cleanups.unshift(() => api.stop());

    // Real sessions: through the API, so their deposit addresses and options are what production stores.
    const merchant = await signUpBenchMerchant(api.url);
    const options: PaymentOption[] = [];
    for (let index = 0; index < SESSIONS; index++) {
      const session = await createSandboxSession(api.url, merchant, {
        amount: `${20 + index}.50`,
        symbols: ['USDC'],
      });
      options.push(paymentOptionOf(session, CHAIN_ID, 'USDC'));
    }

    // The block range: one MintFanout transaction per block (anvil automines), 10 Transfer logs each.
    const generator = benchWalletClient(chain.rpcUrl, CHAIN_ID, ANVIL_DEV_ACCOUNTS[1]!.privateKey);
    const deployHash = await generator.deployContract({
      abi: MintFanout.abi,
      bytecode: MintFanout.bytecode as Hex,
    });
    const fanout = (await generator.waitForTransactionReceipt({ hash: deployHash })).contractAddress!;
    const seededAddresses = Array.from({ length: SEEDED_SESSIONS }, () =>
      getAddress(`0x${randomBytes(20).toString('hex')}`),
    );
    const seededSessionIds = seededAddresses.map(() => randomUUID());
    const seedDb = createDb({ connectionString: services.databaseUrl });
    await seedSessions(seedDb, {
      usdc: chain.contracts.usdc!,
      addresses: seededAddresses,
      sessionIds: seededSessionIds,
    });
    await seedDb.destroy();
    const transfers = plannedTransfers(options, seededAddresses);
    const generationStarted = performance.now();
    const firstBlock = (await generator.getBlockNumber({ cacheTime: 0 })) + 1n;
    let lastHash: Hex | undefined;
    for (let block = 0; block < BLOCKS; block++) {
      const batch = transfers.slice(block * LOGS_PER_BLOCK, (block + 1) * LOGS_PER_BLOCK);
      lastHash = await generator.writeContract({
        address: fanout,
        abi: MintFanout.abi,
        functionName: 'mintEach',
        args: [
          chain.contracts.usdc!,
          batch.map((transfer) => transfer.to),
          batch.map((transfer) => transfer.amount),
        ],
      });
    }
    const lastBlock = (await generator.waitForTransactionReceipt({ hash: lastHash! })).blockNumber;
    if (lastBlock - firstBlock + 1n !== BigInt(BLOCKS))
      throw new Error(`logs span blocks ${firstBlock}–${lastBlock}, not ${BLOCKS} blocks`);
    // Bury the range under exactly the chain's confirmations: its last block is the monitor's safe head.
    const confirmations = networkByChainId(CHAIN_ID)!.confirmations;
    await createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) }).mine({ blocks: confirmations });
    const generationSec = (performance.now() - generationStarted) / 1000;

    const config = loadConfig(services.env);
    const networks = createNetworkRegistry(config);
    const tokenAddresses = networks.byChainId(CHAIN_ID)!.tokens.map((token) => token.address);
    const db = createDb({ connectionString: services.databaseUrl });
    cleanups.unshift(() => db.destroy().then(() => delay(500)));
    const connection = await Connection.connect({ address: services.temporalAddress });
    cleanups.unshift(() => connection.close());
    const temporal = new Client({ connection, namespace: services.temporalNamespace });
    const { scanDeposits } = createChainMonitorActivities({
      db,
      networks,
      signalDepositDetected: depositSignallerFor(temporal),
    });
    const rpc = createPublicClient({ transport: http(chain.rpcUrl) });

    const chunks: [bigint, bigint][] = [];
    for (let from = firstBlock; from <= lastBlock; from += BigInt(MAX_BLOCK_RANGE)) {
      const to = from + BigInt(MAX_BLOCK_RANGE) - 1n;
      chunks.push([from, to < lastBlock ? to : lastBlock]);
    }

    // The monitor's `to` list: every watched deposit address (500: one request per chunk, as the monitor makes).
    const watchedTopics = [...options.map((option) => option.depositAddress), ...seededAddresses].map(
      (address) => pad(address.toLowerCase() as Hex, { size: 32 }),
    );
    if (watchedTopics.length > DEFAULT_ADDRESSES_PER_REQUEST)
      throw new Error(`${watchedTopics.length} watched addresses need more than one request per chunk`);
    /** Baseline: eth_getLogs per chunk (same token addresses, Transfer topic and `to` list as the monitor), nothing else. */
    const rawPass = async () => {
      let logs = 0;
      for (const [from, to] of chunks) {
        const result = await rpc.request({
          method: 'eth_getLogs',
          params: [
            {
              address: tokenAddresses,
              topics: [TRANSFER_TOPIC, null, watchedTopics],
              fromBlock: toHex(from),
              toBlock: toHex(to),
            },
          ],
        });
        logs += result.length;
      }
      return { logs };
    };
    const watchedAddresses = [...options.map((option) => option.depositAddress), ...seededAddresses];
    /** The monitor's own RPC call alone: viem getLogs with the event and `to` list (decoding), per chunk. */
    const decodedPass = async () => {
      let logs = 0;
      for (const [from, to] of chunks)
        logs += (
          await rpc.getLogs({
            address: tokenAddresses,
            event: transferEvent,
            args: { to: watchedAddresses },
            fromBlock: from,
            toBlock: to,
          })
        ).length;
      return { logs };
    };
    let passNumber = 0;
    const monitorPass = async (scan = scanDeposits) => {
      // Same work every pass: the session transfers are recorded afresh and signal again (the workflow ignores repeats).
      await db.deleteFrom('deposits').where('chain_id', '=', CHAIN_ID).execute();
      const monitorId = `bench-scan-${(passNumber += 1)}-${randomUUID()}`;
      await writeCheckpoint(db, { monitorId, chainId: CHAIN_ID, block: firstBlock - 1n });
      const started = performance.now();
      let logs = 0;
      let accepted = 0;
      let scans = 0;
      for (let caughtUp = false; !caughtUp;) {
        const result = await scan({ chainId: CHAIN_ID, monitorId, maxBlockRange: MAX_BLOCK_RANGE });
        logs += result.logs;
        accepted += result.accepted;
        scans += 1;
        caughtUp = result.caughtUp;
        if (result.late) throw new Error(`${result.late} transfers recorded as late`);
      }
      return { logs, accepted, scans, seconds: (performance.now() - started) / 1000 };
    };
    const timed = async <T extends { logs: number }>(pass: () => Promise<T>) => {
      const started = performance.now();
      const result = await pass();
      return { ...result, seconds: (performance.now() - started) / 1000 };
    };

    const expectedLogs = BLOCKS * LOGS_PER_BLOCK;
    const runs = { raw: [] as number[], decoded: [] as number[], monitor: [] as number[] };
    // Pass 0 warms connections, caches and the JIT; passes 1… are measured, the three kinds interleaved.
    for (let pass = 0; pass <= MEASURED_PASSES; pass++) {
      const raw = await timed(rawPass);
      const decoded = await timed(decodedPass);
      const monitor = await monitorPass();
      for (const [kind, result] of Object.entries({ raw, decoded, monitor })) {
        if (result.logs !== expectedLogs)
          throw new Error(`${kind} pass saw ${result.logs} logs, not ${expectedLogs}`);
      }
      if (monitor.accepted !== expectedLogs)
        throw new Error(`monitor accepted ${monitor.accepted} transfers, not ${expectedLogs}`);
      if (monitor.scans !== chunks.length)
        throw new Error(`monitor took ${monitor.scans} scans, not ${chunks.length}`);
      if (pass === 0) continue;
      runs.raw.push(expectedLogs / raw.seconds);
      runs.decoded.push(expectedLogs / decoded.seconds);
      runs.monitor.push(expectedLogs / monitor.seconds);
    }
    // Where the time goes, from one more (unmeasured) pass whose Temporal client times the signals.
    // Summed durations over-count concurrent signals; the wall time counts while any is in flight.
    const signals = { count: 0, ms: 0, wallMs: 0, inFlight: 0, wallSince: 0 };
    const timedTemporal = {
      workflow: {
        getHandle: (workflowId: string) => ({
          async signal(...args: Parameters<ReturnType<Client['workflow']['getHandle']>['signal']>) {
            const started = performance.now();
            if (signals.inFlight++ === 0) signals.wallSince = started;
            try {
              return await temporal.workflow.getHandle(workflowId).signal(...args);
            } finally {
              const ended = performance.now();
              signals.count += 1;
              signals.ms += ended - started;
              if (--signals.inFlight === 0) signals.wallMs += ended - signals.wallSince;
            }
          },
        }),
      },
    } as unknown as Client;
    // …and whose database handle times every statement (client side: round trip included), by its kind.
    const statements = new Map<string, { count: number; ms: number }>();
    const timedDb = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new Pool({ connectionString: services.databaseUrl, max: 10 }) }),
      log(event) {
        const kind = statementKind(event.query.sql);
        const entry = statements.get(kind) ?? { count: 0, ms: 0 };
        entry.count += 1;
        entry.ms += event.queryDurationMillis;
        statements.set(kind, entry);
      },
    });
    cleanups.unshift(() => timedDb.destroy());
    const diagnostic = await monitorPass(
      createChainMonitorActivities({
        db: timedDb,
        networks,
        signalDepositDetected: depositSignallerFor(timedTemporal),
      }).scanDeposits,
    );
    const perLogUs = (logsPerSec: number) => 1e6 / logsPerSec;
    const breakdown = {
      what: 'µs per log: median passes for getLogs; signals and statements timed in one extra pass (signals summed, and their wall time while any was in flight; statements client side, round trip included, some concurrent); the rest is the watched set, targets, flush lookup, deposit rows with totals, checkpoint, block timestamps and the loop',
      rawGetLogsUs: perLogUs(percentile(runs.raw, 50)),
      viemDecodingUs: perLogUs(percentile(runs.decoded, 50)) - perLogUs(percentile(runs.raw, 50)),
      temporalSignalsUs: (signals.ms * 1000) / expectedLogs,
      temporalSignalsWallUs: (signals.wallMs * 1000) / expectedLogs,
      signalsSent: signals.count,
      // The monitor decodes by hand (no viem getLogs), so the rest is counted against the raw request.
      restUs:
        (diagnostic.seconds * 1e6 - signals.wallMs * 1000) / expectedLogs -
        perLogUs(percentile(runs.raw, 50)),
      diagnosticPassMonitorUs: (diagnostic.seconds * 1e6) / expectedLogs,
      statementsPerRange: Object.fromEntries(
        [...statements].map(([kind, { count, ms }]) => [
          kind,
          { perRange: count / chunks.length, msPerRange: ms / chunks.length },
        ]),
      ),
    };
    process.stdout.write(`diagnostic pass: ${JSON.stringify(breakdown, null, 2)}\n`);

    const recorded = await db
      .selectFrom('deposits')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('chain_id', '=', CHAIN_ID)
      .executeTakeFirstOrThrow();
    if (Number(recorded.count) !== expectedLogs)
      throw new Error(`${recorded.count} deposit rows after the last pass, not ${expectedLogs}`);
    // Accepted totals: every session's rows sum to what was sent to its address, base unit for base unit.
    const sentTo = new Map<string, bigint>();
    for (const transfer of transfers)
      sentTo.set(transfer.to.toLowerCase(), (sentTo.get(transfer.to.toLowerCase()) ?? 0n) + transfer.amount);
    const totals = await db
      .selectFrom('deposits')
      .select(['deposit_address', sql<string>`sum(amount)::text`.as('total')])
      .where('chain_id', '=', CHAIN_ID)
      .where('kind', '=', 'accepted')
      .groupBy('deposit_address')
      .execute();
    if (totals.length !== sentTo.size)
      throw new Error(`${totals.length} addresses with accepted deposits, not ${sentTo.size}`);
    for (const row of totals) {
      if (BigInt(row.total) !== sentTo.get(row.deposit_address.toLowerCase()))
        throw new Error(
          `accepted total ${row.total} at ${row.deposit_address}, sent ${sentTo.get(row.deposit_address.toLowerCase())}`,
        );
    }

    const median = (values: number[]) => percentile(values, 50);
    const figures = (values: number[]) => ({
      medianLogsPerSec: median(values),
      minLogsPerSec: Math.min(...values),
      maxLogsPerSec: Math.max(...values),
      passes: values.map(Math.round),
    });
    reportBenchmark('monitorScan', {
      range: {
        chainId: CHAIN_ID,
        blocks: BLOCKS,
        logs: expectedLogs,
        sessionTransfers: SESSIONS * 2,
        seededSessionTransfers: expectedLogs - SESSIONS * 2,
        watchedAddresses: watchedTopics.length,
        sessionsSignalled: SESSIONS,
        maxBlockRange: MAX_BLOCK_RANGE,
        ethGetLogsCalls: chunks.length,
        generationSec,
      },
      measuredPasses: MEASURED_PASSES,
      baseline: {
        what: "raw eth_getLogs per chunk (token addresses, Transfer topic, the watched `to` list: the monitor's request), no decoding",
        ...figures(runs.raw),
      },
      decodedGetLogs: {
        what: "viem getLogs with the Transfer event per chunk (the monitor's RPC call alone)",
        ...figures(runs.decoded),
      },
      subject: {
        what: 'scanDeposits (createChainMonitorActivities) per chunk, fresh checkpoint key per pass',
        ...figures(runs.monitor),
      },
      breakdown,
      ratios: {
        monitorVsRawGetLogs: median(runs.monitor) / median(runs.raw),
        decodedGetLogsVsRaw: median(runs.decoded) / median(runs.raw),
      },
      machine: { atStart: loadAtStart, atEnd: machineLoad() },
      goals: [
        {
          label: 'deposit monitor scan vs raw eth_getLogs over the same logs',
          now: median(runs.monitor) / median(runs.raw),
          goal: { atLeast: 0.5 },
          subject: `${Math.round(median(runs.monitor))} logs/s (scanDeposits, median of ${MEASURED_PASSES} passes)`,
          baseline: `${Math.round(median(runs.raw))} logs/s (raw eth_getLogs, same requests)`,
        },
      ],
    });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});

/** A statement's kind for the timing table: its verb and first table. */
function statementKind(text: string): string {
  const words = text.replace(/\s+/g, ' ').trim().toLowerCase();
  const verb = words.split(' ')[0] ?? '';
  const table = /\b(?:from|into|update)\s+"?([a-z_]+)"?/.exec(words)?.[1] ?? '?';
  return `${verb} ${table}`;
}

/** Sessions and their USDC options straight into the tables (one statement each), expiring in an hour. */
async function seedSessions(
  db: ReturnType<typeof createDb>,
  { usdc, addresses, sessionIds }: { usdc: Address; addresses: Address[]; sessionIds: string[] },
) {
  const wallet = getAddress(`0x${randomBytes(20).toString('hex')}`);
  const merchant = await upsertMerchantByWallet(db, { walletAddress: wallet, payoutAddress: wallet });
  const now = new Date();
  await db
    .insertInto('sessions')
    .values(
      sessionIds.map((id) => ({
        id,
        merchant_id: merchant.id,
        amount: '100000',
        line_items: '[]',
        payment_option_symbols: ['USDC'],
        sandbox_mode: true,
        payout_address: wallet,
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
      sessionIds.map((id, index) => ({
        session_id: id,
        chain_id: CHAIN_ID,
        network: 'ethereum-sepolia',
        symbol: 'USDC',
        token_address: usdc,
        decimals: 6,
        amount: SEEDED_AMOUNT.toString(),
        deposit_address: addresses[index]!,
        payout_address: wallet,
        session_expires_at: new Date(now.getTime() + 3_600_000),
      })),
    )
    .execute();
}
