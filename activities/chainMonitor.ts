import { setTimeout as delay } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Address, PublicClient } from 'viem';
import { fetchDepositTransfers, type DepositTransfers } from '../chain/depositTransfers';
import { HeadCadence } from '../chain/headCadence';
import type { NetworkRegistry } from '../chain/networkRegistry';
import { createPublicClients } from '../chain/publicClients';
import { createDepositAddressFilters, type DepositAddressFilters } from './depositAddressFilters';
import type { Db } from '../db/client';
import {
  countWatchedDepositAddresses,
  findDepositTargets,
  findWatchedDepositAddresses,
  readCheckpoint,
  recordDepositsWithTotals,
  writeCheckpoint,
} from '../db/deposits';
import { storeLateDepositEvent } from '../db/sessionEvents';
import { findFlushTransactions } from '../db/settlements';
import type { DepositDetected } from './sessions';
import {
  createSessionEventActivities,
  type SessionEventActivities,
  type WebhookDeliveryStarter,
} from './sessionEvents';
import { serialiseSessionLifecycleEvent } from '../webhooks/sessionLifecycleEvents';
import { heartbeating } from './settlementSteps';

/** Signals a deposit to its session's workflow; rejects with WorkflowNotFoundError when none runs. */
export type DepositSignaller = (sessionId: string, deposit: DepositDetected) => Promise<void>;

export interface ChainMonitorDependencies {
  db: Db;
  networks: NetworkRegistry;
  /** workflowClient/sessions.ts's signal, bound to the worker's Temporal client. */
  signalDepositDetected: DepositSignaller;
  logger?: { warn(object: object, message: string): void };
  /** Most deposit addresses in one eth_getLogs `to` topic list (CHAIN_MONITOR_ADDRESSES_PER_REQUEST). */
  addressesPerRequest?: number;
  /** How long after a session's expiry its deposit addresses are still watched for late payments. */
  lateWatchSec?: number;
  /** The late window of particular chains (CHAIN_MONITOR_LATE_WATCH_SEC_<chainId>), over lateWatchSec. */
  lateWatchSecByChain?: Partial<Record<number, number>>;
  /**
   * The most watched addresses a scan asks for by `to` topic (CHAIN_MONITOR_FILTERED_MAX_WATCHED): above
   * it, the scan reads every Transfer of the supported tokens and matches recipients in Postgres.
   */
  filteredMaxWatched?: number;
  /**
   * The filters of watched addresses an unfiltered range's recipients pass before Postgres is asked about
   * them (activities/depositAddressFilters.ts); one of its own by default. Tests pass theirs to rebuild it.
   */
  addressFilters?: DepositAddressFilters;
  /** Each scan's lag behind the chain's safe head, for the worker's /metrics. */
  onScanned?: (scan: { chainId: number; blocksBehindSafeHead: bigint }) => void;
  /**
   * How often a scan waiting for the next block asks for the head (default 250 ms) until the chain's blocks
   * come steadily; then at the next block's due time (chain/headCadence.ts).
   */
  headPollMs?: number;
  /**
   * Each monitor's head cadence, kept across cycles; one per monitor id of this process by default. Tests
   * pass theirs to see when each poll was asked.
   */
  headCadenceOf?: (monitorId: string) => HeadCadence;
  /**
   * How long one `scanDeposits` activity keeps scanning (CHAIN_MONITOR_CYCLE_MS): each range as its blocks
   * become safe, its checkpoint written and its sessions signalled before the next, so the workflow task and
   * activity task of a monitor cycle are paid once per cycle instead of once per block. 0: one range per
   * activity (the monitor's shape before).
   */
  cycleMs?: number;
  /**
   * Starts an event's webhook delivery: a transfer mined after its session's expiry gets its
   * `session.paid_late` event and deliveries. A monitor run without it (benchmarks) records transfers only.
   */
  startWebhookDelivery?: WebhookDeliveryStarter;
}

export interface ScanInput {
  chainId: number;
  /** Checkpoint key (the monitor's workflow id). */
  monitorId: string;
  /** Most blocks one scan covers (CHAIN_MONITOR_MAX_BLOCK_RANGE). */
  maxBlockRange: number;
  /** The range this scan tries, as the previous scan advised (adaptive); maxBlockRange when absent. */
  blockRange?: number;
  /**
   * The previous scan's form. After an unfiltered scan `blockRange` was sized by the chain's logs per
   * block, so an unfiltered range needs no one-block probe first; absent (a new run, or after a filtered
   * scan whose quiet ranges grew to the maximum), the probe sizes it.
   */
  previousForm?: ScanForm;
  /**
   * When nothing is past the checkpoint yet, wait up to this long for the next safe block (polling the
   * head every headPollMs) instead of returning at once: a deposit is seen within a head poll of its
   * last confirmation, not after the rest of a workflow timer. 0 or absent: return at once.
   */
  waitForBlockMs?: number;
}

/** How a range was asked for: `to`-filtered by the watched addresses, or every Transfer of the tokens. */
export type ScanForm = 'filtered' | 'unfiltered';

export interface ScanResult {
  fromBlock: string;
  toBlock: string;
  /** Absent when nothing was scanned. */
  form?: ScanForm;
  /** True when the scan reached the safe head (the monitor may sleep). */
  caughtUp: boolean;
  /** Ranges scanned (a cycle covers several; one otherwise, or 0 when nothing was past the checkpoint). */
  ranges: number;
  /** Transfer logs fetched (filtered form: all of them into watched deposit addresses). */
  logs: number;
  /**
   * Distinct recipients asked about in Postgres: in the unfiltered form, those that passed the address
   * filter (ours, and the filter's false positives); in the filtered form, all of them.
   */
  lookedUp: number;
  accepted: number;
  late: number;
  /**
   * Watched payment options counted, up to filteredMaxWatched + 1 (the count stops there: the
   * unfiltered form never reads the set); then eth_getLogs requests made and size refusals met.
   */
  watched: number;
  requests: number;
  refusals: number;
  /**
   * The range the next scan should try: narrowed after a refusal or a range of more than
   * TARGET_LOGS_PER_RANGE logs, grown back while scans stay small.
   */
  nextBlockRange: number;
}

/** Defaults: 500 addresses per `to` list, and late payments watched for 7 days after expiry. */
export const DEFAULT_ADDRESSES_PER_REQUEST = 500;
export const DEFAULT_LATE_WATCH_SEC = 7 * 24 * 3600;
/** A waiting scan asks for the head this often: a quarter of a 1 s block, 4 requests a second per chain. */
export const DEFAULT_HEAD_POLL_MS = 250;
/**
 * One monitor activity covers this long of the chain (docs/decisions.md, "Monitor cycle"): 30 blocks of a
 * 1 s chain per workflow task and activity task instead of one. Well inside the activity's 2-minute
 * start-to-close timeout; its heartbeats (every 5 s) keep a dead worker's cycle noticed within 20 s.
 */
export const DEFAULT_CYCLE_MS = 30_000;
/**
 * Above this many watched payment options a range is asked for unfiltered. Measured (docs/decisions.md,
 * "Deposit scan at steady traffic"): see bench/monitorTraffic.bench.ts.
 */
export const DEFAULT_FILTERED_MAX_WATCHED = 2_000;
/** A scan that fetched fewer logs than this lets the next one try twice the range (up to the maximum). */
const SMALL_SCAN_LOGS = 1_000;
/**
 * A scan that fetched more logs than this narrows the next range in proportion: half of what hosted
 * providers serve in one answer (10,000), so a busy chain's unfiltered ranges are sized by their logs
 * before a provider has to refuse one.
 */
export const TARGET_LOGS_PER_RANGE = 5_000;

/** The timestamps of these blocks, fetched together. */
async function blockTimestamps(client: PublicClient, blockNumbers: bigint[]): Promise<Map<bigint, Date>> {
  const blocks = await Promise.all(blockNumbers.map((blockNumber) => client.getBlock({ blockNumber })));
  return new Map(blocks.map((block) => [block.number!, new Date(Number(block.timestamp) * 1000)]));
}

/**
 * One bounded step of a chain's deposit monitor, up to the chain's safe head (head − confirmations, so a
 * reorg shallower than that never reaches us). Per range it decides its form without reading the watched
 * set: a count of the watched payment options, stopped at `filteredMaxWatched` + 1. At or under it, the
 * scan asks for the supported tokens' Transfers **into those addresses** (`to` topic lists); above it,
 * for every Transfer of those tokens, and finds ours with one indexed query for the range's recipients.
 * Either way a recipient is ours by the same rule (an option whose session expires after now − the
 * chain's late window), so the forms may alternate from range to range. Records every such transfer
 * once, and signals the session when the accepted total covers the option. Signals are repeated on a
 * rescan (the workflow ignores repeats), so a crash between recording and signalling loses nothing. A
 * provider refusing the size of a request gets smaller ones; other RPC errors throw: the activity retry
 * policy is the backoff. Inside an activity it heartbeats, so a dead worker's scan is retried within the
 * heartbeat timeout, not the start-to-close timeout.
 */
export function createChainMonitorActivities({
  db,
  networks,
  signalDepositDetected,
  logger,
  addressesPerRequest = DEFAULT_ADDRESSES_PER_REQUEST,
  lateWatchSec = DEFAULT_LATE_WATCH_SEC,
  lateWatchSecByChain = {},
  filteredMaxWatched = DEFAULT_FILTERED_MAX_WATCHED,
  addressFilters,
  headPollMs = DEFAULT_HEAD_POLL_MS,
  headCadenceOf,
  cycleMs = DEFAULT_CYCLE_MS,
  onScanned,
  startWebhookDelivery,
}: ChainMonitorDependencies) {
  const events = startWebhookDelivery && createSessionEventActivities({ db, startWebhookDelivery });
  const filters = addressFilters ?? createDepositAddressFilters({ db, ...(logger && { logger }) });
  const publicClients = createPublicClients(networks);
  const clientFor = (chainId: number): PublicClient => {
    const client = publicClients.forChain(chainId);
    if (!client) throw new Error(`chain ${chainId} has no RPC URL configured`);
    return client;
  };

  const cadenceOf = headCadenceOf ?? headCadences(headPollMs);

  /** One range; `checkpoint` is the cycle's own previous range's end (it wrote it), read from the row otherwise. */
  const scan = async (input: ScanInput, signal?: AbortSignal, checkpoint?: bigint): Promise<ScanResult> => {
    const { chainId, monitorId, maxBlockRange } = input;
    const network = networks.byChainId(chainId);
    if (!network) throw new Error(`unknown chain ${chainId}`);
    const client = clientFor(chainId);
    const cadence = cadenceOf(monitorId);
    const { confirmations } = network;
    const window = await nextScanWindow(db, client, input, { confirmations, cadence, checkpoint }, signal);
    const { fromBlock, range } = window;
    if (window.toBlock < fromBlock) {
      onScanned?.({ chainId, blocksBehindSafeHead: window.safeHead - window.checkpoint });
      return nothingScanned(window);
    }

    const tokens = new Map(network.tokens.map((token) => [token.address.toLowerCase(), token]));
    const expiringAfter = new Date(Date.now() - (lateWatchSecByChain[chainId] ?? lateWatchSec) * 1000);
    const watched = await countWatchedDepositAddresses(db, {
      chainId,
      expiringAfter,
      upTo: filteredMaxWatched,
    });
    const form: ScanForm = watched > filteredMaxWatched ? 'unfiltered' : 'filtered';
    const recipients =
      form === 'unfiltered'
        ? 'any'
        : // Lower-case is what the topic needs (no checksum keccak per address).
          ((await findWatchedDepositAddresses(db, { chainId, expiringAfter })) as Address[]);
    const { fetched, toBlock, toBlockTime } = await fetchWindowTransfers(client, {
      tokens: [...tokens.values()].map((token) => token.address as Address),
      recipients,
      recipientsPerRequest: addressesPerRequest,
      form,
      previousForm: input.previousForm,
      fromBlock,
      toBlock: window.toBlock,
    });
    const logs = fetched.logs;
    cadence.noteBlockTime(toBlock, toBlockTime);
    const nextBlockRange = nextRange({ fetched, form, range, span: toBlock - fromBlock + 1n, maxBlockRange });

    // Unfiltered, the range holds the chain's traffic: only recipients that pass the filter reach Postgres.
    // Refreshed here, after the logs were fetched: an address a payment in them reached was committed before.
    const narrow =
      form === 'unfiltered'
        ? (recipients: string[]) => filters.candidates(chainId, expiringAfter, recipients)
        : async (recipients: string[]) => recipients;
    const { payments, lookedUp } = await matchPayments(
      db,
      client,
      { chainId, expiringAfter, narrow },
      logs,
      toBlock,
      toBlockTime,
    );
    const acceptedLogs = payments.filter(({ open }) => open);
    const totals = await recordPayments(db, chainId, payments, acceptedLogs);
    const signals = depositSignals(chainId, acceptedLogs, tokens, totals);
    await sendDepositSignals(signalDepositDetected, logger, signals);
    if (events) await announceLatePayments(db, events, chainId, payments);

    await writeCheckpoint(db, { monitorId, chainId, block: toBlock, blockTime: toBlockTime });
    onScanned?.({ chainId, blocksBehindSafeHead: window.safeHead - toBlock });
    return {
      fromBlock: fromBlock.toString(),
      toBlock: toBlock.toString(),
      form,
      caughtUp: toBlock >= window.safeHead,
      ranges: 1,
      logs: logs.length,
      lookedUp,
      accepted: acceptedLogs.length,
      late: payments.length - acceptedLogs.length,
      watched,
      requests: fetched.requests,
      refusals: fetched.refusals,
      nextBlockRange,
    };
  };

  return {
    async scanDeposits(input: ScanInput): Promise<ScanResult> {
      // Called directly (benches, tests) there is no activity to heartbeat for, and no cycle: one range.
      if (!inActivity()) return scan(input);
      const { cancellationSignal } = Context.current();
      return heartbeating(() =>
        cycleMs > 0 ? scanForCycle(scan, cycleMs, input, cancellationSignal) : scan(input),
      );
    },
  };
}

/**
 * The window's transfers and its last block's timestamp. Unfiltered, a range holds the chain's whole
 * traffic: unless the previous scan was unfiltered too (its advised range is already sized by the chain's
 * logs), its first block is asked for alone and the rest sized to about TARGET_LOGS_PER_RANGE logs at that
 * block's count, so no request is far larger (after a switch from the filtered form, whose quiet ranges
 * grow to the maximum, the advised range says nothing about the chain's traffic). Caught up, a range is one
 * block and this is its only request. The range may end before the window's `toBlock`.
 */
async function fetchWindowTransfers(
  client: PublicClient,
  {
    tokens,
    recipients,
    recipientsPerRequest,
    form,
    previousForm,
    fromBlock,
    toBlock: windowEnd,
  }: {
    tokens: Address[];
    recipients: Address[] | 'any';
    recipientsPerRequest: number;
    form: ScanForm;
    previousForm: ScanForm | undefined;
    fromBlock: bigint;
    toBlock: bigint;
  },
): Promise<{ fetched: DepositTransfers; toBlock: bigint; toBlockTime: Date }> {
  const fetchRange = (from: bigint, to: bigint) =>
    fetchDepositTransfers(client, { tokens, recipients, fromBlock: from, toBlock: to, recipientsPerRequest });
  let toBlock = windowEnd;
  let first: DepositTransfers | undefined;
  if (form === 'unfiltered' && previousForm !== 'unfiltered' && toBlock > fromBlock) {
    first = await fetchRange(fromBlock, fromBlock);
    const span = Math.max(1, Math.floor(TARGET_LOGS_PER_RANGE / Math.max(1, first.logs.length)));
    if (fromBlock + BigInt(span) - 1n < toBlock) toBlock = fromBlock + BigInt(span) - 1n;
  }
  // The range's last block's timestamp is needed whatever the logs: asked for beside them.
  const [rest, toBlockTime] = await Promise.all([
    first && toBlock === fromBlock ? undefined : fetchRange(first ? fromBlock + 1n : fromBlock, toBlock),
    blockTimestamps(client, [toBlock]).then((times) => times.get(toBlock)!),
  ]);
  return { fetched: joinTransfers(first, rest), toBlock, toBlockTime };
}

/**
 * Scans range after range for `cycleMs`: a caught-up scan waits for the next safe block (up to the
 * cycle's end) and scans it at once, so a deposit is seen as soon as one scan per activity saw it. Every
 * range is a complete scan of its own (recorded, signalled, checkpoint written), so a worker that dies
 * in a cycle loses at most the range in hand: the retried activity resumes from the durable checkpoint,
 * scans that range again and records nothing twice (the deposits' unique transfer key), as a retried
 * single scan does. Worker shutdown cancels the activity: the cycle returns after the range in hand.
 */
async function scanForCycle(
  scan: (input: ScanInput, signal?: AbortSignal, checkpoint?: bigint) => Promise<ScanResult>,
  cycleMs: number,
  input: ScanInput,
  signal?: AbortSignal,
): Promise<ScanResult> {
  const endsAt = Date.now() + cycleMs;
  let blockRange = input.blockRange;
  let previousForm = input.previousForm;
  let total: ScanResult | undefined;
  for (;;) {
    const result = await scan(
      {
        ...input,
        ...(blockRange !== undefined && { blockRange }),
        ...(previousForm && { previousForm }),
        waitForBlockMs: Math.max(0, endsAt - Date.now()),
      },
      signal,
      // The checkpoint this cycle wrote last (a range's end, or the one it found): no read per range.
      total && BigInt(total.toBlock),
    );
    total = total ? addScans(total, result) : result;
    blockRange = result.nextBlockRange;
    previousForm = result.form ?? previousForm;
    if (Date.now() >= endsAt || signal?.aborted) return total;
  }
}

/** Two consecutive scans as one: the first's start, the second's end, form and advice; counts added. */
function addScans(first: ScanResult, second: ScanResult): ScanResult {
  return {
    fromBlock: first.ranges > 0 ? first.fromBlock : second.fromBlock,
    toBlock: second.toBlock,
    ...((second.form ?? first.form) && { form: second.form ?? first.form }),
    caughtUp: second.caughtUp,
    ranges: first.ranges + second.ranges,
    logs: first.logs + second.logs,
    lookedUp: first.lookedUp + second.lookedUp,
    accepted: first.accepted + second.accepted,
    late: first.late + second.late,
    watched: second.ranges > 0 ? second.watched : first.watched,
    requests: first.requests + second.requests,
    refusals: first.refusals + second.refusals,
    nextBlockRange: second.nextBlockRange,
  };
}

/** The transfers of two adjacent spans (`first` before `rest`), as one fetch's. */
function joinTransfers(first?: DepositTransfers, rest?: DepositTransfers): DepositTransfers {
  if (!first) return rest!;
  if (!rest) return first;
  return {
    logs: [...first.logs, ...rest.logs],
    requests: first.requests + rest.requests,
    refusals: first.refusals + rest.refusals,
    acceptedSpan: rest.acceptedSpan ?? first.acceptedSpan,
  };
}

function inActivity(): boolean {
  try {
    Context.current();
    return true;
  } catch {
    return false;
  }
}

/**
 * The range the next scan tries: the widest span that succeeded after a refusal; after a range of at
 * least SMALL_SCAN_LOGS logs, or any unfiltered range with logs, the blocks that hold about
 * TARGET_LOGS_PER_RANGE at this range's logs per block; twice this one after a small scan, up to the maximum.
 */
function nextRange({
  fetched,
  form,
  range,
  span,
  maxBlockRange,
}: {
  fetched: { logs: unknown[]; acceptedSpan?: bigint };
  form: ScanForm;
  /** The range this scan was allowed, and the blocks it covered (fewer at the safe head). */
  range: bigint;
  span: bigint;
  maxBlockRange: number;
}): number {
  const logs = fetched.logs.length;
  // Sized by the blocks actually covered, not the range allowed: a probe-sized unfiltered range covers
  // fewer blocks than it was allowed, and the next one (asked without a probe) must not take them all.
  // An unfiltered range holds the chain's traffic: sized by its logs per block even when small (a caught-up
  // one-block scan of 400 logs doubled the advice to the maximum, and the range after a worker restart then
  // asked for every block missed at once: 121 MB in the workerIdle bench, refused forever).
  const fitting =
    logs < SMALL_SCAN_LOGS && !(form === 'unfiltered' && logs > 0)
      ? Math.min(Number(range) * 2, maxBlockRange)
      : Math.min(maxBlockRange, Math.max(1, Math.floor((Number(span) * TARGET_LOGS_PER_RANGE) / logs)));
  return fetched.acceptedSpan !== undefined ? Math.min(Number(fetched.acceptedSpan), fitting) : fitting;
}

/** Each monitor's head cadence (chain/headCadence.ts), by monitor id; kept across cycles. */
function headCadences(headPollMs: number): (monitorId: string) => HeadCadence {
  const cadences = new Map<string, HeadCadence>();
  return (monitorId) => {
    let cadence = cadences.get(monitorId);
    if (!cadence) cadences.set(monitorId, (cadence = new HeadCadence({ headPollMs })));
    return cadence;
  };
}

/** A scan that found nothing past the checkpoint (its wait for the next safe block ran out). */
function nothingScanned({
  fromBlock,
  checkpoint,
  range,
}: {
  fromBlock: bigint;
  checkpoint: bigint;
  range: bigint;
}): ScanResult {
  return {
    fromBlock: fromBlock.toString(),
    toBlock: checkpoint.toString(),
    caughtUp: true,
    ranges: 0,
    ...NOTHING_SCANNED,
    nextBlockRange: Number(range),
  };
}

const NOTHING_SCANNED = {
  logs: 0,
  lookedUp: 0,
  accepted: 0,
  late: 0,
  watched: 0,
  requests: 0,
  refusals: 0,
} as const;

/**
 * The blocks this scan covers: from past the checkpoint, at most `range` of them, up to the chain's safe
 * head. Caught up: waits here for the next safe block (the workflow then scans again without a timer),
 * asking for the head when the chain's cadence says (chain/headCadence.ts). Inside a cycle the checkpoint is
 * the one the cycle wrote, and a head seen before stands for the current one while the next block is not due
 * yet (the wait asks again when it is): a head that old is still a safe one, it only ends the range earlier.
 */
async function nextScanWindow(
  db: Db,
  client: PublicClient,
  { monitorId, maxBlockRange, blockRange, waitForBlockMs = 0 }: ScanInput,
  {
    confirmations,
    cadence,
    checkpoint,
  }: { confirmations: number; cadence: HeadCadence; checkpoint: bigint | undefined },
  signal?: AbortSignal,
): Promise<{ fromBlock: bigint; toBlock: bigint; checkpoint: bigint; safeHead: bigint; range: bigint }> {
  const range = BigInt(Math.max(1, Math.min(blockRange ?? maxBlockRange, maxBlockRange)));
  const askHead = async () => {
    const sentAt = Date.now();
    // No cache: viem keeps a block number for 4 s by default, which would delay detection by blocks.
    const head = await client.getBlockNumber({ cacheTime: 0 });
    cadence.notePoll(head, sentAt, Date.now());
    return head;
  };
  const waits = waitForBlockMs > 0;
  const known = waits && checkpoint !== undefined ? cadence.currentHead(Date.now()) : undefined;
  const [firstHead, stored] = await Promise.all([
    known ?? askHead(),
    checkpoint ?? readCheckpoint(db, monitorId),
  ]);
  let head = firstHead;
  if (stored !== undefined && waits) {
    const waitUntil = Date.now() + waitForBlockMs;
    while (head - BigInt(confirmations) <= stored && Date.now() < waitUntil && !signal?.aborted) {
      // A cancelled wait (worker shutdown) ends early: the scan returns what it has, nothing is lost.
      const pause = Math.min(cadence.nextPollDelay(Date.now()), Math.max(0, waitUntil - Date.now()));
      await delay(pause, undefined, { signal }).catch(() => undefined);
      head = await askHead();
    }
  }
  const safeHead = head - BigInt(confirmations);
  const from = stored ?? safeHead - range;
  const fromBlock = from + 1n < 0n ? 0n : from + 1n;
  const toBlock = fromBlock + range - 1n < safeHead ? fromBlock + range - 1n : safeHead;
  return { fromBlock, toBlock, checkpoint: from, safeHead, range };
}

type TransferLog = Awaited<ReturnType<typeof fetchDepositTransfers>>['logs'][number];
type DepositTarget = Awaited<ReturnType<typeof findDepositTargets>>[number];
/**
 * A transfer into a session's deposit address; `open` when it pays the session (on time, session open),
 * `afterExpiry` when its block is stamped at or after the session's expiry.
 */
type Payment = { log: TransferLog; target: DepositTarget; open: boolean; afterExpiry: boolean };

/**
 * The transfers that pay a session's deposit address in its token (not a flush's own swap), each judged
 * on time or late by its block's timestamp; and the timestamp of the range's last block.
 */
async function matchPayments(
  db: Db,
  client: PublicClient,
  {
    chainId,
    expiringAfter,
    narrow,
  }: {
    chainId: number;
    expiringAfter: Date;
    /** The recipients worth asking Postgres about (the address filter, in the unfiltered form). */
    narrow: (recipients: string[]) => Promise<string[]>;
  },
  logs: TransferLog[],
  toBlock: bigint,
  toBlockTime: Date,
): Promise<{ payments: Payment[]; lookedUp: number }> {
  // Decoded lower-case already (chain/depositTransfers.ts).
  const recipients = await narrow([...new Set(logs.map((log) => log.args.to))]);
  const targets = await findDepositTargets(db, chainId, recipients, expiringAfter);
  // Targets by (address, token): one lookup per log instead of a scan of every target.
  const targetOf = new Map<string, DepositTarget>();
  for (const target of targets) {
    const key = `${target.depositAddress.toLowerCase()}:${target.tokenAddress}`;
    if (!targetOf.has(key)) targetOf.set(key, target);
  }
  if (targetOf.size === 0) return { payments: [], lookedUp: recipients.length };
  const matchedLogs = logs.flatMap((log) => {
    const target = targetOf.get(`${log.args.to}:${log.address.toLowerCase()}`);
    return target ? [{ log, target }] : [];
  });
  // A flush swaps into the forwarder itself (the router pays USDe to it): those transfers are not payments.
  // Asked only for the matched logs' transactions (an unfiltered range holds thousands of others).
  const flushes = await findFlushTransactions(db, [
    ...new Set(matchedLogs.map(({ log }) => log.transactionHash!)),
  ]);
  const payments = matchedLogs.filter(({ log }) => !flushes.has(log.transactionHash!));
  // On time is judged by the block's timestamp, not by when this scan runs: a lagging monitor must not
  // turn a payment mined before expiry into a late one. Block timestamps never decrease, so a target
  // expiring after the range's last block is on time for every block of it: only the others need
  // their own block's timestamp.
  const blockTimes = await blockTimestamps(client, [
    ...new Set(
      payments
        .filter(({ target }) => target.expiresAt.getTime() <= toBlockTime.getTime())
        .map(({ log }) => log.blockNumber!),
    ),
  ]);
  blockTimes.set(toBlock, toBlockTime);
  const onTimeOf = ({ log, target }: (typeof payments)[number]) =>
    target.expiresAt.getTime() > toBlockTime.getTime() ||
    blockTimes.get(log.blockNumber!)!.getTime() < target.expiresAt.getTime();

  // A session its timer expired may still have been paid on time (it waits for lagging scans, but
  // not forever): such a transfer counts as paying it; retry-forwarder settles it.
  return {
    payments: payments.map((payment) => {
      const { target } = payment;
      const onTime = onTimeOf(payment);
      const open = onTime && (target.status === 'awaiting_payment' || target.status === 'expired');
      return { ...payment, open, afterExpiry: !onTime };
    }),
    lookedUp: recipients.length,
  };
}

/**
 * Every transfer recorded once, accepted when it pays its session and late otherwise, and the accepted
 * totals of the paid sessions after it: one statement.
 */
async function recordPayments(
  db: Db,
  chainId: number,
  payments: Payment[],
  acceptedLogs: Payment[],
): Promise<Map<string, bigint>> {
  return recordDepositsWithTotals(db, {
    chainId,
    deposits: payments.map(({ log, target, open }) => ({
      session_id: target.sessionId,
      chain_id: chainId,
      token_address: log.address.toLowerCase(),
      deposit_address: target.depositAddress,
      amount: log.args.value.toString(),
      tx_hash: log.transactionHash!,
      log_index: log.logIndex!,
      block_number: log.blockNumber!,
      kind: open ? 'accepted' : 'late',
    })),
    totalsFor: [...new Set(acceptedLogs.map(({ target }) => target.sessionId))],
  });
}

/**
 * The sessions to signal: from the accepted totals after this range, the running total before its
 * transfers (the rows of earlier ranges), then log by log: a session is signalled once, with the
 * transfer that first covers its option (as recorded in order).
 */
function depositSignals(
  chainId: number,
  acceptedLogs: Payment[],
  tokens: Map<string, { address: string; decimals: number }>,
  totals: Map<string, bigint>,
): Map<string, DepositDetected> {
  const inRange = new Map<string, bigint>();
  for (const { log, target } of acceptedLogs) {
    const key = `${target.sessionId}:${log.address.toLowerCase()}`;
    inRange.set(key, (inRange.get(key) ?? 0n) + log.args.value);
  }
  const running = new Map([...inRange].map(([key, sum]) => [key, (totals.get(key) ?? 0n) - sum] as const));
  const signals = new Map<string, DepositDetected>();
  for (const { log, target } of acceptedLogs) {
    const tokenAddress = log.address.toLowerCase();
    const key = `${target.sessionId}:${tokenAddress}`;
    const total = running.get(key)! + log.args.value;
    running.set(key, total);
    // Underpaid so far: recorded, the session keeps waiting for the rest. An expired session's workflow
    // has ended: nothing to signal.
    if (total < BigInt(target.expectedAmount) || target.status !== 'awaiting_payment') continue;
    if (signals.has(target.sessionId)) continue;
    signals.set(target.sessionId, {
      chainId,
      token: tokens.get(tokenAddress)!.address,
      amount: total.toString(),
      txHash: log.transactionHash!,
      blockNumber: log.blockNumber!.toString(),
      logIndex: log.logIndex!,
      depositAddress: target.depositAddress,
      decimals: tokens.get(tokenAddress)!.decimals,
    });
  }
  return signals;
}

/**
 * Each transfer mined after its session's expiry gets its `session.paid_late` event, stored once per
 * transfer, and its deliveries started (idempotent both: a rescan or a retried scan, after a crash between
 * recording and announcing, finds the stored event and starts what is not started yet).
 */
async function announceLatePayments(
  db: Db,
  events: SessionEventActivities,
  chainId: number,
  payments: Payment[],
): Promise<void> {
  for (const { log } of payments.filter(({ afterExpiry }) => afterExpiry)) {
    const event = await storeLateDepositEvent(
      db,
      { chainId, txHash: log.transactionHash!, logIndex: log.logIndex! },
      serialiseSessionLifecycleEvent,
    );
    if (event) await events.startWebhookDeliveries({ eventId: event.id });
  }
}

/** One signal per session paid, concurrently; the workflow takes the first covering deposit it gets. */
async function sendDepositSignals(
  signalDepositDetected: DepositSignaller,
  logger: ChainMonitorDependencies['logger'],
  signals: Map<string, DepositDetected>,
): Promise<void> {
  const sent = await Promise.allSettled(
    [...signals].map(async ([sessionId, deposit]) => {
      try {
        await signalDepositDetected(sessionId, deposit);
      } catch (error) {
        // The reconciler starts a missing workflow; the deposit row keeps the payment either way.
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        logger?.warn(
          { sessionId, txHash: deposit.txHash },
          'deposit for a session without a running workflow',
        );
      }
    }),
  );
  const failed = sent.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

export type ChainMonitorActivities = ReturnType<typeof createChainMonitorActivities>;
