import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { getAddress, type Address, type PublicClient } from 'viem';
import { fetchDepositTransfers } from '../chain/depositTransfers';
import type { NetworkRegistry } from '../chain/networkRegistry';
import { createPublicClients } from '../chain/publicClients';
import type { Db } from '../db/client';
import {
  findDepositTargets,
  findWatchedDepositAddresses,
  readCheckpoint,
  recordDepositsWithTotals,
  writeCheckpoint,
} from '../db/deposits';
import { findFlushTransactions } from '../db/settlements';
import { signalDepositDetected } from '../workflowClient/sessions';
import type { DepositDetected } from './sessions';

export interface ChainMonitorDependencies {
  db: Db;
  networks: NetworkRegistry;
  temporal: Client;
  logger?: { warn(object: object, message: string): void };
  /** Most deposit addresses in one eth_getLogs `to` topic list (CHAIN_MONITOR_ADDRESSES_PER_REQUEST). */
  addressesPerRequest?: number;
  /** How long after a session's expiry its deposit addresses are still watched for late payments. */
  lateWatchSec?: number;
  /** How often a scan waiting for the next block asks for the head (default 250 ms). */
  headPollMs?: number;
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
   * When nothing is past the checkpoint yet, wait up to this long for the next safe block (polling the
   * head every headPollMs) instead of returning at once: a deposit is seen within a head poll of its
   * last confirmation, not after the rest of a workflow timer. 0 or absent: return at once.
   */
  waitForBlockMs?: number;
}

export interface ScanResult {
  fromBlock: string;
  toBlock: string;
  /** True when the scan reached the safe head (the monitor may sleep). */
  caughtUp: boolean;
  /** Transfer logs fetched (all of them into watched deposit addresses). */
  logs: number;
  accepted: number;
  late: number;
  /** Deposit addresses watched, eth_getLogs requests made and size refusals met. */
  watched: number;
  requests: number;
  refusals: number;
  /** The range the next scan should try: narrowed after a refusal, grown back while scans stay small. */
  nextBlockRange: number;
}

/** Defaults: 500 addresses per `to` list, and late payments watched for 7 days after expiry. */
export const DEFAULT_ADDRESSES_PER_REQUEST = 500;
export const DEFAULT_LATE_WATCH_SEC = 7 * 24 * 3600;
/** A waiting scan asks for the head this often: a quarter of a 1 s block, 4 requests a second per chain. */
export const DEFAULT_HEAD_POLL_MS = 250;
/** A scan that fetched fewer logs than this lets the next one try twice the range (up to the maximum). */
const SMALL_SCAN_LOGS = 1_000;

/** The timestamps of these blocks, fetched together. */
async function blockTimestamps(client: PublicClient, blockNumbers: bigint[]): Promise<Map<bigint, Date>> {
  const blocks = await Promise.all(blockNumbers.map((blockNumber) => client.getBlock({ blockNumber })));
  return new Map(blocks.map((block) => [block.number!, new Date(Number(block.timestamp) * 1000)]));
}

/**
 * One bounded step of a chain's deposit monitor: asks the chain for the Transfers of the supported tokens
 * **into the deposit addresses it watches** (the `to` topic; chain/depositTransfers.ts), so its cost
 * follows our sessions and not the chain's traffic, up to the chain's safe head (head − confirmations,
 * so a reorg shallower than that never reaches us); records every such transfer once, and signals the
 * session when the accepted total covers the option. Signals are repeated on a rescan (the workflow
 * ignores repeats), so a crash between recording and signalling loses nothing. A provider refusing the
 * size of a request gets smaller ones; other RPC errors throw: the activity retry policy is the backoff.
 */
export function createChainMonitorActivities({
  db,
  networks,
  temporal,
  logger,
  addressesPerRequest = DEFAULT_ADDRESSES_PER_REQUEST,
  lateWatchSec = DEFAULT_LATE_WATCH_SEC,
  headPollMs = DEFAULT_HEAD_POLL_MS,
}: ChainMonitorDependencies) {
  const publicClients = createPublicClients(networks);
  const clientFor = (chainId: number): PublicClient => {
    const client = publicClients.forChain(chainId);
    if (!client) throw new Error(`chain ${chainId} has no RPC URL configured`);
    return client;
  };

  return {
    async scanDeposits(input: ScanInput): Promise<ScanResult> {
      const { chainId, monitorId, maxBlockRange } = input;
      const network = networks.byChainId(chainId);
      if (!network) throw new Error(`unknown chain ${chainId}`);
      const client = clientFor(chainId);
      const window = await nextScanWindow(db, client, network.confirmations, input, headPollMs);
      const { fromBlock, toBlock, range } = window;
      if (toBlock < fromBlock) {
        return {
          fromBlock: fromBlock.toString(),
          toBlock: window.checkpoint.toString(),
          caughtUp: true,
          ...NOTHING_SCANNED,
          nextBlockRange: Number(range),
        };
      }

      const tokens = new Map(network.tokens.map((token) => [token.address.toLowerCase(), token]));
      const watched = await findWatchedDepositAddresses(db, {
        chainId,
        expiringAfter: new Date(Date.now() - lateWatchSec * 1000),
      });
      // The range's last block's timestamp is needed whatever the logs: asked for beside them.
      const [fetched, toBlockTime] = await Promise.all([
        fetchDepositTransfers(client, {
          tokens: [...tokens.values()].map((token) => token.address as Address),
          recipients: watched.map((address) => getAddress(address)),
          fromBlock,
          toBlock,
          recipientsPerRequest: addressesPerRequest,
        }),
        blockTimestamps(client, [toBlock]).then((times) => times.get(toBlock)!),
      ]);
      const logs = fetched.logs;
      const nextBlockRange =
        fetched.acceptedSpan !== undefined
          ? Number(fetched.acceptedSpan)
          : logs.length < SMALL_SCAN_LOGS
            ? Math.min(Number(range) * 2, maxBlockRange)
            : Number(range);

      const payments = await matchPayments(db, client, chainId, logs, toBlock, toBlockTime);
      const acceptedLogs = payments.filter(({ open }) => open);
      const totals = await recordPayments(db, chainId, payments, acceptedLogs);
      const signals = depositSignals(chainId, acceptedLogs, tokens, totals);
      await sendDepositSignals(temporal, logger, signals);

      await writeCheckpoint(db, { monitorId, chainId, block: toBlock, blockTime: toBlockTime });
      return {
        fromBlock: fromBlock.toString(),
        toBlock: toBlock.toString(),
        caughtUp: toBlock >= window.safeHead,
        logs: logs.length,
        accepted: acceptedLogs.length,
        late: payments.length - acceptedLogs.length,
        watched: watched.length,
        requests: fetched.requests,
        refusals: fetched.refusals,
        nextBlockRange,
      };
    },
  };
}

const NOTHING_SCANNED = { logs: 0, accepted: 0, late: 0, watched: 0, requests: 0, refusals: 0 } as const;

/**
 * The blocks this scan covers: from past the checkpoint, at most `range` of them, up to the chain's safe
 * head. Caught up: waits here for the next safe block (the workflow then scans again without a timer).
 */
async function nextScanWindow(
  db: Db,
  client: PublicClient,
  confirmations: number,
  { monitorId, maxBlockRange, blockRange, waitForBlockMs = 0 }: ScanInput,
  headPollMs: number,
): Promise<{ fromBlock: bigint; toBlock: bigint; checkpoint: bigint; safeHead: bigint; range: bigint }> {
  const range = BigInt(Math.max(1, Math.min(blockRange ?? maxBlockRange, maxBlockRange)));
  // No cache: viem keeps a block number for 4 s by default, which would delay detection by blocks.
  const [firstHead, stored] = await Promise.all([
    client.getBlockNumber({ cacheTime: 0 }),
    readCheckpoint(db, monitorId),
  ]);
  let head = firstHead;
  if (stored !== undefined && waitForBlockMs > 0) {
    const waitUntil = Date.now() + waitForBlockMs;
    while (head - BigInt(confirmations) <= stored && Date.now() < waitUntil) {
      await delay(Math.min(headPollMs, Math.max(0, waitUntil - Date.now())));
      head = await client.getBlockNumber({ cacheTime: 0 });
    }
  }
  const safeHead = head - BigInt(confirmations);
  const checkpoint = stored ?? safeHead - range;
  const fromBlock = checkpoint + 1n < 0n ? 0n : checkpoint + 1n;
  const toBlock = fromBlock + range - 1n < safeHead ? fromBlock + range - 1n : safeHead;
  return { fromBlock, toBlock, checkpoint, safeHead, range };
}

type TransferLog = Awaited<ReturnType<typeof fetchDepositTransfers>>['logs'][number];
type DepositTarget = Awaited<ReturnType<typeof findDepositTargets>>[number];
/** A transfer into a session's deposit address; `open` when it pays the session (on time, session open). */
type Payment = { log: TransferLog; target: DepositTarget; open: boolean };

/**
 * The transfers that pay a session's deposit address in its token (not a flush's own swap), each judged
 * on time or late by its block's timestamp; and the timestamp of the range's last block.
 */
async function matchPayments(
  db: Db,
  client: PublicClient,
  chainId: number,
  logs: TransferLog[],
  toBlock: bigint,
  toBlockTime: Date,
): Promise<Payment[]> {
  const recipients = [...new Set(logs.map((log) => log.args.to.toLowerCase()))];
  // The targets and the flushes among the logs' transactions, asked for together.
  // A flush swaps into the forwarder itself (the router pays USDe to it): those transfers are not payments.
  const [targets, flushes] = await Promise.all([
    findDepositTargets(db, chainId, recipients),
    findFlushTransactions(db, [...new Set(logs.map((log) => log.transactionHash!))]),
  ]);
  // Targets by (address, token): one lookup per log instead of a scan of every target.
  const targetOf = new Map<string, DepositTarget>();
  for (const target of targets) {
    const key = `${target.depositAddress.toLowerCase()}:${target.tokenAddress}`;
    if (!targetOf.has(key)) targetOf.set(key, target);
  }
  const matchedLogs = logs.flatMap((log) => {
    const target = targetOf.get(`${log.args.to.toLowerCase()}:${log.address.toLowerCase()}`);
    return target ? [{ log, target }] : [];
  });
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
  return payments.map((payment) => {
    const { target } = payment;
    const open = onTimeOf(payment) && (target.status === 'awaiting_payment' || target.status === 'expired');
    return { ...payment, open };
  });
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

/** One signal per session paid, concurrently; the workflow takes the first covering deposit it gets. */
async function sendDepositSignals(
  temporal: Client,
  logger: ChainMonitorDependencies['logger'],
  signals: Map<string, DepositDetected>,
): Promise<void> {
  const sent = await Promise.allSettled(
    [...signals].map(async ([sessionId, deposit]) => {
      try {
        await signalDepositDetected(temporal, sessionId, deposit);
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
