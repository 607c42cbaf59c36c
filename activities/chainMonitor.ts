import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { createPublicClient, getAddress, http, type Address, type PublicClient } from 'viem';
import { fetchDepositTransfers } from '../chain/depositTransfers';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { Db } from '../db/client';
import {
  acceptedTotal,
  findDepositTargets,
  findWatchedDepositAddresses,
  readCheckpoint,
  recordDeposit,
  writeCheckpoint,
} from '../db/deposits';
import { findFlushTransactions } from '../db/settlements';
import { sessionWorkflowId } from '../workflows/workflowIds';
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
}

export interface ScanInput {
  chainId: number;
  /** Checkpoint key (the monitor's workflow id). */
  monitorId: string;
  /** Most blocks one scan covers (CHAIN_MONITOR_MAX_BLOCK_RANGE). */
  maxBlockRange: number;
  /** The range this scan tries, as the previous scan advised (adaptive); maxBlockRange when absent. */
  blockRange?: number;
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
}: ChainMonitorDependencies) {
  const clients = new Map<number, PublicClient>();
  const clientFor = (chainId: number): PublicClient => {
    const network = networks.byChainId(chainId);
    if (!network?.rpcUrl) throw new Error(`chain ${chainId} has no RPC URL configured`);
    let client = clients.get(chainId);
    if (!client) {
      client = createPublicClient({
        transport: http(network.rpcUrl, { retryCount: 0, timeout: 15_000 }),
      }) as PublicClient;
      clients.set(chainId, client);
    }
    return client;
  };

  return {
    async scanDeposits({ chainId, monitorId, maxBlockRange, blockRange }: ScanInput): Promise<ScanResult> {
      const network = networks.byChainId(chainId);
      if (!network) throw new Error(`unknown chain ${chainId}`);
      const client = clientFor(chainId);
      const range = BigInt(Math.max(1, Math.min(blockRange ?? maxBlockRange, maxBlockRange)));
      // No cache: viem keeps a block number for 4 s by default, which would delay detection by blocks.
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const safeHead = head - BigInt(network.confirmations);
      const checkpoint = (await readCheckpoint(db, monitorId)) ?? safeHead - range;
      const fromBlock = checkpoint + 1n < 0n ? 0n : checkpoint + 1n;
      const toBlock = fromBlock + range - 1n < safeHead ? fromBlock + range - 1n : safeHead;
      if (toBlock < fromBlock) {
        return {
          fromBlock: fromBlock.toString(),
          toBlock: checkpoint.toString(),
          caughtUp: true,
          logs: 0,
          accepted: 0,
          late: 0,
          watched: 0,
          requests: 0,
          refusals: 0,
          nextBlockRange: Number(range),
        };
      }

      const tokens = new Map(network.tokens.map((token) => [token.address.toLowerCase(), token]));
      const watched = await findWatchedDepositAddresses(db, {
        chainId,
        expiringAfter: new Date(Date.now() - lateWatchSec * 1000),
      });
      const fetched = await fetchDepositTransfers(client, {
        tokens: [...tokens.values()].map((token) => token.address as Address),
        recipients: watched.map((address) => getAddress(address)),
        fromBlock,
        toBlock,
        recipientsPerRequest: addressesPerRequest,
      });
      const logs = fetched.logs;
      const nextBlockRange =
        fetched.acceptedSpan !== undefined
          ? Number(fetched.acceptedSpan)
          : logs.length < SMALL_SCAN_LOGS
            ? Math.min(Number(range) * 2, maxBlockRange)
            : Number(range);
      const recipients = [...new Set(logs.map((log) => log.args.to.toLowerCase()))];
      const targets = await findDepositTargets(db, chainId, recipients);
      // A flush swaps into the forwarder itself (the router pays USDe to it): those transfers are not payments.
      const matched = logs.filter((log) =>
        targets.some((target) => target.depositAddress.toLowerCase() === log.args.to.toLowerCase()),
      );
      const flushes = await findFlushTransactions(db, [
        ...new Set(matched.map((log) => log.transactionHash!)),
      ]);
      // On time is judged by the block's timestamp, not by when this scan runs: a lagging monitor must not
      // turn a payment mined before expiry into a late one.
      const blockTimes = await blockTimestamps(client, [
        ...new Set([...matched.map((log) => log.blockNumber!), toBlock]),
      ]);
      let accepted = 0;
      let late = 0;

      for (const log of logs) {
        const tokenAddress = log.address.toLowerCase();
        const target = targets.find(
          (entry) =>
            entry.depositAddress.toLowerCase() === log.args.to.toLowerCase() &&
            entry.tokenAddress === tokenAddress,
        );
        if (!target || flushes.has(log.transactionHash!)) continue;
        const onTime = blockTimes.get(log.blockNumber!)!.getTime() < target.expiresAt.getTime();
        // A session its timer expired may still have been paid on time (it waits for lagging scans, but
        // not forever): such a transfer counts as paying it; retry-forwarder settles it.
        const open = onTime && (target.status === 'awaiting_payment' || target.status === 'expired');
        await recordDeposit(db, {
          session_id: target.sessionId,
          chain_id: chainId,
          token_address: tokenAddress,
          deposit_address: target.depositAddress,
          amount: log.args.value.toString(),
          tx_hash: log.transactionHash!,
          log_index: log.logIndex!,
          block_number: log.blockNumber!,
          kind: open ? 'accepted' : 'late',
        });
        if (!open) {
          late += 1;
          continue;
        }
        accepted += 1;
        const total = await acceptedTotal(db, { sessionId: target.sessionId, chainId, tokenAddress });
        // Underpaid so far: recorded, the session keeps waiting for the rest. An expired session's workflow
        // has ended: nothing to signal.
        if (total < BigInt(target.expectedAmount) || target.status !== 'awaiting_payment') continue;
        const deposit: DepositDetected = {
          chainId,
          token: tokens.get(tokenAddress)!.address,
          amount: total.toString(),
          txHash: log.transactionHash!,
          blockNumber: log.blockNumber!.toString(),
          logIndex: log.logIndex!,
          depositAddress: target.depositAddress,
          decimals: tokens.get(tokenAddress)!.decimals,
        };
        try {
          await temporal.workflow
            .getHandle(sessionWorkflowId(target.sessionId))
            .signal('depositDetected', deposit);
        } catch (error) {
          // The reconciler starts a missing workflow; the deposit row keeps the payment either way.
          if (!(error instanceof WorkflowNotFoundError)) throw error;
          logger?.warn(
            { sessionId: target.sessionId, txHash: deposit.txHash },
            'deposit for a session without a running workflow',
          );
        }
      }

      await writeCheckpoint(db, { monitorId, chainId, block: toBlock, blockTime: blockTimes.get(toBlock) });
      return {
        fromBlock: fromBlock.toString(),
        toBlock: toBlock.toString(),
        caughtUp: toBlock >= safeHead,
        logs: logs.length,
        accepted,
        late,
        watched: watched.length,
        requests: fetched.requests,
        refusals: fetched.refusals,
        nextBlockRange,
      };
    },
  };
}

export type ChainMonitorActivities = ReturnType<typeof createChainMonitorActivities>;
