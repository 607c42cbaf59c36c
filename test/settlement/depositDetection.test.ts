import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { getAddress, type Hex } from 'viem';
import { createChainMonitorActivities, type ScanForm, type ScanResult } from '../../activities/chainMonitor';
import {
  createDepositAddressFilters,
  type DepositAddressFilters,
} from '../../activities/depositAddressFilters';
import { TestCollectible, TestStablecoin } from '../../contracts/artifacts';
import { createDb } from '../../db/client';
import { countWatchedDepositAddresses, readCheckpoint, writeCheckpoint } from '../../db/deposits';
import { upsertMerchantByWallet } from '../../db/merchants';
import { migrateToLatest } from '../../db/migrate';
import { startBackgroundTransfers, type BackgroundTransfers } from '../../dev/backgroundTransfers';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { dropDatabase, ensureDatabase } from '../../dev/services/postgres';
import { chainMonitorWorkflowId } from '../../workflows/workflowIds';
import { startCappedRpcProxy, type CappedRpcProxy } from '../chain/cappedRpcProxy';
import { testStack } from '../harness/stack';
import { seedWatchedOptions } from '../harness/watchedAddresses';
import {
  createStackSession,
  payDeposit,
  startSettlementStack,
  type SettlementStack,
  type StackSession,
} from './settlementStack';
import { startWorkerProcess, waitForOutput } from './workerProcess';
import { depositSignallerFor } from '../../workflowClient/sessions';

/**
 * Never miss a deposit (issue 40, item 4): the deposit monitor at a watched set of 1,000,000 addresses,
 * where it asks for every Transfer of the supported tokens (the unfiltered form) and matches recipients in
 * Postgres, among background stablecoin traffic (dev/backgroundTransfers.ts), with the late window of one
 * chain widened to 30 days. Everything real: anvil chains of this file's own, the worker and the monitors
 * on Temporal, and a Postgres database of this file's own (a million watched rows must not change how
 * other files' monitors scan). Each chain's RPC goes through a proxy that counts eth_getLogs by form and
 * can refuse or hold them as a provider or a crash would.
 */
const ETHEREUM_SEPOLIA = 11155111;
const BASE_SEPOLIA = 84532;
const CONFIRMATIONS = 3;
const WATCHED = 1_000_000;
const DAY_SEC = 24 * 3600;
/** The Ethereum Sepolia stand-in's late window, widened; Base Sepolia keeps the 7-day default. */
const LATE_WINDOW_SEC = 30 * DAY_SEC;
const TRAFFIC_ACCOUNT = ANVIL_DEV_ACCOUNTS[9]!;

describe('never miss a deposit: the monitor at 1,000,000 watched addresses and steady traffic', () => {
  let stack: SettlementStack;
  let databaseName: string;
  const proxies = new Map<number, CappedRpcProxy>();
  const traffic = new Map<number, BackgroundTransfers>();
  /** The stack monitors' lag after each scan (what the worker's /metrics shows), by chain. */
  const lags = new Map<number, bigint[]>();

  beforeAll(async () => {
    databaseName = `stablepay_detection_${randomBytes(4).toString('hex')}`;
    const databaseUrl = await ensureDatabase(testStack().adminDatabaseUrl, databaseName);
    const migrating = createDb({ connectionString: databaseUrl, maxConnections: 1 });
    try {
      await migrateToLatest(migrating);
    } finally {
      await migrating.destroy();
    }
    stack = await startSettlementStack({
      chainIds: [ETHEREUM_SEPOLIA, BASE_SEPOLIA],
      databaseUrl,
      rpcUrlOf: async (rpcUrl, chainId) => {
        const proxy = await startCappedRpcProxy(rpcUrl, { maxBlocks: 2_000, maxLogs: 10_000 });
        proxies.set(chainId, proxy);
        return proxy.url;
      },
      monitor: {
        lateWatchSecByChain: { [ETHEREUM_SEPOLIA]: LATE_WINDOW_SEC },
        onScanned: ({ chainId, blocksBehindSafeHead }) =>
          lags.set(chainId, [...(lags.get(chainId) ?? []).slice(-99), blocksBehindSafeHead]),
      },
      // The same for a worker process started from workerEnv.
      env: { [`CHAIN_MONITOR_LATE_WATCH_SEC_${ETHEREUM_SEPOLIA}`]: String(LATE_WINDOW_SEC) },
    });
    const wallet = getAddress(`0x${randomBytes(20).toString('hex')}`);
    const seeded = await upsertMerchantByWallet(stack.db, { walletAddress: wallet, payoutAddress: wallet });
    await seedWatchedOptions(stack.db, {
      chainId: ETHEREUM_SEPOLIA,
      network: 'ethereum-sepolia',
      tokenAddress: stack.contracts(ETHEREUM_SEPOLIA).usdc!,
      merchantId: seeded.id,
      payoutAddress: wallet,
      count: WATCHED,
      tag: 'million',
    });
    for (const chainId of [ETHEREUM_SEPOLIA, BASE_SEPOLIA]) {
      const contracts = stack.contracts(chainId);
      traffic.set(
        chainId,
        await startBackgroundTransfers({
          rpcUrl: stack.rpcUrls[chainId]!,
          chainId,
          tokens: [contracts.usdc!, contracts.usdt!],
          senderPrivateKey: TRAFFIC_ACCOUNT.privateKey,
        }),
      );
    }
  }, 900_000);

  afterAll(async () => {
    await stack?.stop();
    for (const proxy of proxies.values()) await proxy.close();
    await dropDatabase(testStack().adminDatabaseUrl, databaseName);
  }, 120_000);

  const createSession = (amount: string) => createStackSession(stack, { amount });
  type Session = StackSession;
  const usdcOption = (session: Session, chainId: number) =>
    session.paymentOptions.find((option) => option.chainId === chainId && option.symbol === 'USDC')!;
  const payInFull = (session: Session, chainId: number) => {
    const option = usdcOption(session, chainId);
    return payDeposit(stack.chain(chainId), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: BigInt(option.amount),
    });
  };
  const confirm = (chainId: number) => stack.chain(chainId).mine({ blocks: CONFIRMATIONS + 1 });

  async function waitForStatus(sessionId: string, wanted: string[], timeoutMs = 90_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = (await stack.app.request(`/v1/sessions/${sessionId}/status`)).body.status;
      if (wanted.includes(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`session ${sessionId} is ${last}, not ${wanted.join('/')} after ${timeoutMs} ms`);
  }

  /** Waits until the stack's own monitor of the chain has scanned `block` (its checkpoint is past it). */
  async function waitForMonitorPast(chainId: number, block: bigint, timeoutMs = 90_000): Promise<void> {
    const monitorId = chainMonitorWorkflowId(chainId, stack.prefix);
    const deadline = Date.now() + timeoutMs;
    while (((await readCheckpoint(stack.db, monitorId)) ?? -1n) < block) {
      if (Date.now() > deadline) throw new Error(`monitor ${monitorId} has not scanned block ${block}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const depositRows = (sessionId: string) =>
    stack.db.selectFrom('deposits').selectAll().where('session_id', '=', sessionId).execute();
  const head = (chainId: number) => stack.chain(chainId).getBlockNumber({ cacheTime: 0 });
  const filteredRequests = (proxy: CappedRpcProxy) =>
    proxy.stats.getLogsRequests - proxy.stats.unfilteredRequests;

  /**
   * Payments a run of scans matched: the stack's own monitor scans the same chain, so a session may
   * already be confirming when this one sees its payment, which it then counts (never records) as late.
   */
  const matchedIn = (scans: ScanResult[]) => scans.reduce((sum, scan) => sum + scan.accepted + scan.late, 0);

  /** A monitor of the test's own (own checkpoint) on the stack's database, chains and Temporal. */
  function ownMonitor(chainId: number, filteredMaxWatched?: number, addressFilters?: DepositAddressFilters) {
    const monitorId = `detection-${randomBytes(4).toString('hex')}`;
    const { scanDeposits } = createChainMonitorActivities({
      db: stack.db,
      signalDepositDetected: depositSignallerFor(stack.temporal),
      networks: stack.networks,
      filteredMaxWatched,
      ...(addressFilters && { addressFilters }),
      lateWatchSecByChain: { [ETHEREUM_SEPOLIA]: LATE_WINDOW_SEC },
    });
    return {
      monitorId,
      startAfter: (block: bigint) => writeCheckpoint(stack.db, { monitorId, chainId, block }),
      /** Scans until caught up with the safe head, carrying the advised range and the form like the workflow. */
      async scanAll(maxBlockRange = 2_000, blockRange = maxBlockRange): Promise<ScanResult[]> {
        const results: ScanResult[] = [];
        let previousForm: ScanForm | undefined;
        for (;;) {
          const result = await scanDeposits({
            chainId,
            monitorId,
            maxBlockRange,
            blockRange,
            ...(previousForm && { previousForm }),
          });
          results.push(result);
          blockRange = result.nextBlockRange;
          previousForm = result.form ?? previousForm;
          if (result.caughtUp) return results;
        }
      },
    };
  }

  it('a payment among 1,000,000 watched addresses and background traffic is found in the unfiltered form: one deposit row, the session confirms', async () => {
    const proxy = proxies.get(ETHEREUM_SEPOLIA)!;
    expect(
      await countWatchedDepositAddresses(stack.db, {
        chainId: ETHEREUM_SEPOLIA,
        expiringAfter: new Date(Date.now() - LATE_WINDOW_SEC * 1000),
        upTo: WATCHED,
      }),
    ).toBeGreaterThanOrEqual(WATCHED);
    const session = await createSession('12');
    const before = { filtered: filteredRequests(proxy), unfiltered: proxy.stats.unfilteredRequests };

    await traffic.get(ETHEREUM_SEPOLIA)!.send(600);
    await payInFull(session, ETHEREUM_SEPOLIA);
    await traffic.get(ETHEREUM_SEPOLIA)!.send(600);
    await confirm(ETHEREUM_SEPOLIA);

    await waitForStatus(session.id, ['confirming', 'bridging', 'completed']);
    const rows = await depositRows(session.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'accepted', amount: usdcOption(session, ETHEREUM_SEPOLIA).amount });
    // The stack's monitor asked for every Transfer of the tokens, never for the million addresses by `to`.
    expect(proxy.stats.unfilteredRequests).toBeGreaterThan(before.unfiltered);
    expect(filteredRequests(proxy)).toBe(before.filtered);
    // Caught up among a million watched addresses: the lag the worker reports came back to 0.
    expect(lags.get(ETHEREUM_SEPOLIA)).toContain(0n);
    await waitForStatus(session.id, ['completed']);
  }, 180_000);

  it('a payment to an address watched only in the late window (its session expired 29 days ago) is recorded late and settled by retry-forwarder, as any late deposit; one expired 31 days ago is outside the window', async () => {
    const inWindow = await createSession('4');
    const outside = await createSession('5');
    for (const [session, days] of [
      [inWindow, 29],
      [outside, 31],
    ] as const) {
      // Expired the way its timer would have: the workflow ended, the row moved to expired.
      await stack.temporal.workflow.getHandle(`session-${session.id}`).terminate('test: expiry');
      await sql`UPDATE sessions SET status = 'expired', expires_at = now() - make_interval(days => ${days})
                WHERE id = ${session.id}`.execute(stack.db);
    }
    await traffic.get(ETHEREUM_SEPOLIA)!.send(300);
    await payInFull(inWindow, ETHEREUM_SEPOLIA);
    await payInFull(outside, ETHEREUM_SEPOLIA);
    await confirm(ETHEREUM_SEPOLIA);
    await waitForMonitorPast(ETHEREUM_SEPOLIA, (await head(ETHEREUM_SEPOLIA)) - BigInt(CONFIRMATIONS));

    const [late] = await depositRows(inWindow.id);
    expect(late).toMatchObject({ kind: 'late', amount: usdcOption(inWindow, ETHEREUM_SEPOLIA).amount });
    expect((await stack.app.request(`/v1/sessions/${inWindow.id}/status`)).body.status).toBe('expired');
    expect(await depositRows(outside.id)).toEqual([]);

    const retried = await stack.app.request(`/v1/merchants/me/sessions/${inWindow.id}/retry-forwarder`, {
      method: 'POST',
      headers: stack.merchant.auth,
    });
    expect(retried.status).toBe(202);
    await waitForStatus(inWindow.id, ['completed']);
  }, 180_000);

  it('payments in the ranges where the scan switches between the filtered and unfiltered forms are each found once', async () => {
    const sessions = [await createSession('6'), await createSession('7'), await createSession('8')];
    const watchedNow = await countWatchedDepositAddresses(stack.db, {
      chainId: BASE_SEPOLIA,
      expiringAfter: new Date(Date.now() - 7 * DAY_SEC * 1000),
      upTo: 100_000,
    });
    // The switch point is the watched set as it is: five more watched options tip it over.
    const monitor = ownMonitor(BASE_SEPOLIA, watchedNow);
    await monitor.startAfter((await head(BASE_SEPOLIA)) - BigInt(CONFIRMATIONS));
    const base = traffic.get(BASE_SEPOLIA)!;
    const scans: ScanResult[] = [];
    const payAndScan = async (session: Session) => {
      await base.send(200);
      await payInFull(session, BASE_SEPOLIA);
      await confirm(BASE_SEPOLIA);
      const results = await monitor.scanAll();
      scans.push(...results);
      return results;
    };

    const filteredFirst = await payAndScan(sessions[0]!);
    const wallet = getAddress(`0x${randomBytes(20).toString('hex')}`);
    const merchant = await upsertMerchantByWallet(stack.db, { walletAddress: wallet, payoutAddress: wallet });
    const extraTag = `switch-${randomBytes(4).toString('hex')}`;
    await seedWatchedOptions(stack.db, {
      chainId: BASE_SEPOLIA,
      network: 'base-sepolia',
      tokenAddress: stack.contracts(BASE_SEPOLIA).usdc!,
      merchantId: merchant.id,
      payoutAddress: wallet,
      count: 5,
      tag: extraTag,
      withinSec: 3600,
    });
    const unfiltered = await payAndScan(sessions[1]!);
    // Out of the window again (the expiry trigger carries the sessions' expiry to their options).
    await sql`UPDATE sessions SET expires_at = now() - interval '60 days' WHERE merchant_id = ${merchant.id}`.execute(
      stack.db,
    );
    const filteredAgain = await payAndScan(sessions[2]!);

    expect(filteredFirst.every((scan) => scan.form === 'filtered')).toBe(true);
    expect(unfiltered.every((scan) => scan.form === 'unfiltered')).toBe(true);
    expect(filteredAgain.every((scan) => scan.form === 'filtered')).toBe(true);
    // Contiguous ranges across the switches: every block scanned once, each payment accepted once.
    for (let index = 1; index < scans.length; index += 1) {
      if (scans[index]!.form === undefined) continue;
      const previous = scans
        .slice(0, index)
        .reverse()
        .find((scan) => scan.form !== undefined)!;
      expect(BigInt(scans[index]!.fromBlock)).toBe(BigInt(previous.toBlock) + 1n);
    }
    // Each payment matched once by this monitor's scans (as accepted, or as late when the stack's own
    // monitor had already moved the session on to confirming), and recorded once, accepted.
    expect([filteredFirst, unfiltered, filteredAgain].map(matchedIn)).toEqual([1, 1, 1]);
    for (const session of sessions) {
      expect((await depositRows(session.id)).map((row) => row.kind)).toEqual(['accepted']);
    }
  }, 180_000);

  const lookedUpIn = (scans: ScanResult[]) => scans.reduce((sum, scan) => sum + scan.lookedUp, 0);
  const lateWindowStart = () => new Date(Date.now() - LATE_WINDOW_SEC * 1000);

  it('a deposit to an address created after the address filter was built (between two ranges) is found: the filter reads the options changed since its last read', async () => {
    const filters = createDepositAddressFilters({ db: stack.db });
    const monitor = ownMonitor(ETHEREUM_SEPOLIA, undefined, filters);
    const eth = traffic.get(ETHEREUM_SEPOLIA)!;
    await monitor.startAfter(await head(ETHEREUM_SEPOLIA));
    await eth.send(300);
    await confirm(ETHEREUM_SEPOLIA);
    const before = await monitor.scanAll();
    expect(before.some((scan) => scan.form === 'unfiltered')).toBe(true);
    const built = filters.describe(ETHEREUM_SEPOLIA)!;
    expect(built.added).toBeGreaterThanOrEqual(WATCHED);

    // Created after the build: its address reaches the filter only through the read of changes.
    const session = await createSession('16');
    const address = usdcOption(session, ETHEREUM_SEPOLIA).depositAddress;
    expect(filters.mightContain(ETHEREUM_SEPOLIA, address)).toBe(false);
    await eth.send(300);
    await payInFull(session, ETHEREUM_SEPOLIA);
    await eth.send(300);
    await confirm(ETHEREUM_SEPOLIA);
    const after = await monitor.scanAll();

    expect(after.every((scan) => scan.form === undefined || scan.form === 'unfiltered')).toBe(true);
    expect(matchedIn(after)).toBe(1);
    expect((await depositRows(session.id)).map((row) => row.kind)).toEqual(['accepted']);
    // The same filter (no rebuild), the new address in it; of the ranges' recipients (a pool of 5,000
    // strangers), Postgres was asked about ours and the filter's few false positives only.
    expect(filters.describe(ETHEREUM_SEPOLIA)!.builtAt).toBe(built.builtAt);
    expect(filters.mightContain(ETHEREUM_SEPOLIA, address)).toBe(true);
    expect(lookedUpIn(after)).toBeGreaterThanOrEqual(1);
    expect(lookedUpIn(after)).toBeLessThan(20);
  }, 180_000);

  it('an address watched only in the late window (expired 29 days ago) is in the rebuilt address filter and its payment is found late; one expired 31 days ago falls out of it', async () => {
    const filters = createDepositAddressFilters({ db: stack.db });
    const monitor = ownMonitor(ETHEREUM_SEPOLIA, undefined, filters);
    const inWindow = await createSession('17');
    const outside = await createSession('18');
    await monitor.startAfter(await head(ETHEREUM_SEPOLIA));
    await confirm(ETHEREUM_SEPOLIA);
    await monitor.scanAll(); // built while both sessions are open: both addresses in
    for (const session of [inWindow, outside]) {
      expect(
        filters.mightContain(ETHEREUM_SEPOLIA, usdcOption(session, ETHEREUM_SEPOLIA).depositAddress),
      ).toBe(true);
    }
    for (const [session, days] of [
      [inWindow, 29],
      [outside, 31],
    ] as const) {
      await stack.temporal.workflow.getHandle(`session-${session.id}`).terminate('test: expiry');
      await sql`UPDATE sessions SET status = 'expired', expires_at = now() - make_interval(days => ${days})
                WHERE id = ${session.id}`.execute(stack.db);
    }

    await filters.rebuild(ETHEREUM_SEPOLIA, lateWindowStart());
    const rebuilt = filters.describe(ETHEREUM_SEPOLIA)!;
    // As rebuilt, before any read of changes: the late-window address in, the one past the window out.
    expect(
      filters.mightContain(ETHEREUM_SEPOLIA, usdcOption(inWindow, ETHEREUM_SEPOLIA).depositAddress),
    ).toBe(true);
    expect(filters.mightContain(ETHEREUM_SEPOLIA, usdcOption(outside, ETHEREUM_SEPOLIA).depositAddress)).toBe(
      false,
    );
    await traffic.get(ETHEREUM_SEPOLIA)!.send(300);
    await payInFull(inWindow, ETHEREUM_SEPOLIA);
    await payInFull(outside, ETHEREUM_SEPOLIA);
    await confirm(ETHEREUM_SEPOLIA);
    const scans = await monitor.scanAll();

    expect(filters.describe(ETHEREUM_SEPOLIA)!.builtAt).toBe(rebuilt.builtAt);
    expect(scans.reduce((sum, scan) => sum + scan.late, 0)).toBe(1);
    expect((await depositRows(inWindow.id)).map((row) => row.kind)).toEqual(['late']);
    expect(await depositRows(outside.id)).toEqual([]);
  }, 180_000);

  it('a recipient that passes the address filter but is no deposit address of ours (a false positive) is asked about in Postgres and matches nothing', async () => {
    const filters = createDepositAddressFilters({ db: stack.db });
    const monitor = ownMonitor(ETHEREUM_SEPOLIA, undefined, filters);
    const session = await createSession('19');
    const option = usdcOption(session, ETHEREUM_SEPOLIA);
    // Words 0 and 2 of our address flipped by the same bits: the same probes (their XOR is a seed), another
    // address. The filter cannot tell them apart; Postgres can.
    const hex = option.depositAddress.slice(2).toLowerCase();
    const flip = (word: string) => ((parseInt(word, 16) ^ 0x5a5a5a5a) >>> 0).toString(16).padStart(8, '0');
    const twin = `0x${flip(hex.slice(0, 8))}${hex.slice(8, 16)}${flip(hex.slice(16, 24))}${hex.slice(24)}`;
    await monitor.startAfter(await head(ETHEREUM_SEPOLIA));
    await confirm(ETHEREUM_SEPOLIA);
    await monitor.scanAll();
    expect(twin).not.toBe(`0x${hex}`);
    expect(filters.mightContain(ETHEREUM_SEPOLIA, twin)).toBe(true);

    await traffic.get(ETHEREUM_SEPOLIA)!.send(300);
    await payDeposit(stack.chain(ETHEREUM_SEPOLIA), {
      token: option.tokenAddress,
      to: getAddress(twin),
      amount: BigInt(option.amount),
    });
    await confirm(ETHEREUM_SEPOLIA);
    const scans = await monitor.scanAll();

    expect(scans.some((scan) => scan.form === 'unfiltered')).toBe(true);
    expect(lookedUpIn(scans)).toBeGreaterThanOrEqual(1);
    expect(matchedIn(scans)).toBe(0);
    expect(await depositRows(session.id)).toEqual([]);
    const intoTwin = await stack.db
      .selectFrom('deposits')
      .select('id')
      .where(sql<string>`lower(deposit_address)`, '=', twin)
      .execute();
    expect(intoTwin).toEqual([]);
    expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status).toBe(
      'awaiting_payment',
    );
  }, 180_000);

  it('a range the node refuses for size is split in halves (unfiltered form), and unfiltered ranges are sized to about 5,000 logs', async () => {
    const proxy = proxies.get(ETHEREUM_SEPOLIA)!;
    const eth = traffic.get(ETHEREUM_SEPOLIA)!;
    const monitor = ownMonitor(ETHEREUM_SEPOLIA);
    const session = await createSession('9');
    await monitor.startAfter(await head(ETHEREUM_SEPOLIA));
    // Four blocks of 90 logs around the payment: one block fits the cap of 100, two do not.
    for (let block = 0; block < 4; block += 1) {
      await eth.send(90);
      if (block === 1) await payInFull(session, ETHEREUM_SEPOLIA);
    }
    await confirm(ETHEREUM_SEPOLIA);
    proxy.setCaps({ maxBlocks: 2_000, maxLogs: 100 });
    let refused: ScanResult[];
    try {
      refused = await monitor.scanAll(50);
    } finally {
      proxy.setCaps({ maxBlocks: 2_000, maxLogs: 10_000 });
    }
    expect(refused[0]!.form).toBe('unfiltered');
    expect(refused[0]!.refusals).toBeGreaterThan(0);
    expect(refused[0]!.nextBlockRange).toBeLessThan(50);
    expect(matchedIn(refused)).toBe(1);
    expect((await depositRows(session.id)).map((row) => row.kind)).toEqual(['accepted']);

    // No refusal, but 12,000 logs over 48 blocks in a 50-block range: the scan asks for the first block
    // alone, then for the blocks that hold about 5,000 logs at its count; the next scans read the rest,
    // each in one request (no probe after an unfiltered scan) and each sized by the blocks the one before
    // covered, never by the range it was allowed (which would ask for the other 28 blocks at once).
    const busy = ownMonitor(ETHEREUM_SEPOLIA);
    await busy.startAfter(await head(ETHEREUM_SEPOLIA));
    await eth.send(12_000);
    await confirm(ETHEREUM_SEPOLIA);
    const sized = await busy.scanAll(50);
    const [first] = sized;
    expect(first!.refusals).toBe(0);
    expect(first!.requests).toBe(2);
    expect(first!.logs).toBeGreaterThan(4_000);
    expect(first!.logs).toBeLessThanOrEqual(5_000);
    expect(Number(BigInt(first!.toBlock) - BigInt(first!.fromBlock) + 1n)).toBeLessThan(48);
    expect(sized.reduce((sum, scan) => sum + scan.logs, 0)).toBeGreaterThanOrEqual(12_000);
    const after = sized.slice(1).filter((scan) => scan.form === 'unfiltered' && scan.logs > 0);
    expect(after.length).toBeGreaterThan(1);
    for (const scan of after) {
      expect(scan.requests).toBe(1);
      expect(scan.logs).toBeLessThanOrEqual(5_500);
    }
  }, 240_000);

  it('an unfiltered range of a few hundred logs a block advises the next range by its logs, so the blocks a restarted worker missed are not asked for at once', async () => {
    const eth = traffic.get(ETHEREUM_SEPOLIA)!;
    const monitor = ownMonitor(ETHEREUM_SEPOLIA);
    await monitor.startAfter(await head(ETHEREUM_SEPOLIA));
    // About Ethereum's 400 logs a block: 250 and 150 in two blocks, under the 1,000 of a "small" scan.
    await eth.send(400);
    await confirm(ETHEREUM_SEPOLIA);
    const scans = (await monitor.scanAll(2_000)).filter(
      (scan) => scan.form === 'unfiltered' && scan.logs > 0,
    );
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      const span = Number(BigInt(scan.toBlock) - BigInt(scan.fromBlock) + 1n);
      // Sized by the logs (about 5,000 a range), never doubled toward the 2,000-block maximum: a range of
      // every block missed at 400 logs each outgrew what a provider (or viem, at 10 MiB) answers.
      expect(scan.nextBlockRange).toBe(Math.min(2_000, Math.max(1, Math.floor((span * 5_000) / scan.logs))));
      expect(scan.nextBlockRange).toBeLessThan(2_000);
    }
  }, 120_000);

  it('a Transfer of another token contract and an ERC-721 Transfer into watched deposit addresses are never matched, in either form', async () => {
    const session = await createSession('10');
    for (const chainId of [ETHEREUM_SEPOLIA, BASE_SEPOLIA]) {
      const chain = stack.chain(chainId);
      const option = usdcOption(session, chainId);
      const otherToken = await chain.deployContract({
        abi: TestStablecoin.abi,
        bytecode: TestStablecoin.bytecode as Hex,
        args: ['USD Coin', 'USDC', 6],
      });
      const otherTokenAddress = (await chain.waitForTransactionReceipt({ hash: otherToken }))
        .contractAddress!;
      const collectible = await chain.deployContract({
        abi: TestCollectible.abi,
        bytecode: TestCollectible.bytecode as Hex,
      });
      const collectibleAddress = (await chain.waitForTransactionReceipt({ hash: collectible }))
        .contractAddress!;
      // The same recipient and the amount due: only the emitter (or the event's shape) tells them apart.
      await payDeposit(chain, {
        token: otherTokenAddress,
        to: option.depositAddress,
        amount: BigInt(option.amount),
      });
      const minted = await chain.writeContract({
        address: collectibleAddress,
        abi: TestCollectible.abi,
        functionName: 'mint',
        args: [option.depositAddress, BigInt(option.amount)],
      });
      await chain.waitForTransactionReceipt({ hash: minted });
      await confirm(chainId);
      await waitForMonitorPast(chainId, (await head(chainId)) - BigInt(CONFIRMATIONS));
    }
    expect(await depositRows(session.id)).toEqual([]);
    expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status).toBe(
      'awaiting_payment',
    );
  }, 180_000);

  it('a deposit removed by a reorg shallower than the confirmations never reaches the session (unfiltered form); paid again, it confirms', async () => {
    const session = await createSession('11');
    const chain = stack.chain(ETHEREUM_SEPOLIA);
    const snapshot = await chain.snapshot();
    await payInFull(session, ETHEREUM_SEPOLIA);
    await chain.revert({ id: snapshot });
    await confirm(ETHEREUM_SEPOLIA);
    await chain.mine({ blocks: 5 });
    await waitForMonitorPast(ETHEREUM_SEPOLIA, (await head(ETHEREUM_SEPOLIA)) - BigInt(CONFIRMATIONS));
    expect(await depositRows(session.id)).toEqual([]);
    expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status).toBe(
      'awaiting_payment',
    );

    await payInFull(session, ETHEREUM_SEPOLIA);
    await confirm(ETHEREUM_SEPOLIA);
    await waitForStatus(session.id, ['confirming', 'bridging', 'completed']);
    expect(await depositRows(session.id)).toHaveLength(1);
  }, 180_000);

  it('a worker killed in the middle of a range: another worker scans the range again, the deposit is recorded once and the session confirms', async () => {
    const proxy = proxies.get(ETHEREUM_SEPOLIA)!;
    await stack.stopWorkers();
    let restarted = false;
    const first = startWorkerProcess(stack.workerEnv);
    try {
      await waitForOutput(first, /worker polling/);
      const session = await createSession('13');
      await traffic.get(ETHEREUM_SEPOLIA)!.send(200);
      // Held before paying: the worker's own settlement transactions (earlier tests' sessions) mine blocks
      // too, so no range past this head may be read until the worker has died in one.
      const held = proxy.holdRangeReaching((await head(ETHEREUM_SEPOLIA)) + 1n);
      await payInFull(session, ETHEREUM_SEPOLIA);
      await confirm(ETHEREUM_SEPOLIA);
      // The worker process's scan has asked for a range past the head it knew before the payment: it dies there.
      await held.reached;
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      held.release();
      expect(await depositRows(session.id)).toEqual([]);

      await stack.startWorkers();
      restarted = true;
      // The dead worker's scan is retried once its heartbeat times out (20 s), from the same checkpoint.
      await waitForStatus(session.id, ['confirming', 'bridging', 'completed'], 120_000);
      const rows = await depositRows(session.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.kind).toBe('accepted');
    } finally {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
      if (!restarted) await stack.startWorkers();
    }
  }, 240_000);

  /** The deposit monitor's scan in flight (Temporal's view of the workflow's pending activity). */
  async function monitorActivityInFlight(chainId: number) {
    const handle = stack.temporal.workflow.getHandle(chainMonitorWorkflowId(chainId, stack.prefix));
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    const scan = pending.find((activity) => activity.activityType?.name === 'scanDeposits');
    return (
      scan && { activityId: scan.activityId!, startedAt: Number(scan.lastStartedTime?.seconds ?? 0) * 1000 }
    );
  }

  it('a worker killed while one monitor activity covers several ranges: the deposit it had signalled stays once, the one in hand is found by the retried activity, once', async () => {
    const proxy = proxies.get(ETHEREUM_SEPOLIA)!;
    await stack.stopWorkers();
    let restarted = false;
    // A cycle longer than this test's steps: one activity must cover both payments' blocks.
    const first = startWorkerProcess({ ...stack.workerEnv, CHAIN_MONITOR_CYCLE_MS: '90000' });
    try {
      await waitForOutput(first, /worker polling/);
      const pollingSince = Date.now() - 1_000;
      // The cycle this worker started (the stopped workers' cycle ended at their shutdown).
      let cycle = await monitorActivityInFlight(ETHEREUM_SEPOLIA);
      while (!cycle || cycle.startedAt < pollingSince) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        cycle = await monitorActivityInFlight(ETHEREUM_SEPOLIA);
      }
      const paidFirst = await createSession('14');
      const paidSecond = await createSession('15');
      await payInFull(paidFirst, ETHEREUM_SEPOLIA);
      await confirm(ETHEREUM_SEPOLIA);
      await waitForStatus(paidFirst.id, ['confirming', 'bridging', 'completed']);

      const held = proxy.holdRangeReaching((await head(ETHEREUM_SEPOLIA)) + 1n);
      await payInFull(paidSecond, ETHEREUM_SEPOLIA);
      await confirm(ETHEREUM_SEPOLIA);
      await held.reached;
      // The range in hand is read by the activity that signalled the first payment: one activity, two ranges.
      expect((await monitorActivityInFlight(ETHEREUM_SEPOLIA))?.activityId).toBe(cycle.activityId);
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      held.release();
      expect(await depositRows(paidSecond.id)).toEqual([]);

      await stack.startWorkers();
      restarted = true;
      // The killed cycle is retried once its heartbeat times out (20 s), from the checkpoint it had written.
      await waitForStatus(paidSecond.id, ['confirming', 'bridging', 'completed'], 120_000);
      for (const session of [paidFirst, paidSecond]) {
        const rows = await depositRows(session.id);
        expect(rows).toHaveLength(1);
        expect(rows[0]!.kind).toBe('accepted');
      }
    } finally {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
      if (!restarted) await stack.startWorkers();
    }
  }, 300_000);
});
