import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { createPublicClient, http, parseAbiItem, type Address, type PublicClient } from 'viem';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { Db } from '../db/client';
import {
  acceptedTotal,
  findDepositTargets,
  readCheckpoint,
  recordDeposit,
  writeCheckpoint,
} from '../db/deposits';
import { findFlushTransactions } from '../db/settlements';
import { sessionWorkflowId } from '../workers/sessionWorkflows';
import type { DepositDetected } from './sessions';

export interface ChainMonitorDependencies {
  db: Db;
  networks: NetworkRegistry;
  temporal: Client;
  logger?: { warn(object: object, message: string): void };
}

export interface ScanInput {
  chainId: number;
  /** Checkpoint key (the monitor's workflow id). */
  monitorId: string;
  /** Most blocks one eth_getLogs call covers. */
  maxBlockRange: number;
}

export interface ScanResult {
  fromBlock: string;
  toBlock: string;
  /** True when the scan reached the safe head (the monitor may sleep). */
  caughtUp: boolean;
  logs: number;
  accepted: number;
  late: number;
}

/** The timestamps of these blocks, fetched together. */
async function blockTimestamps(client: PublicClient, blockNumbers: bigint[]): Promise<Map<bigint, Date>> {
  const blocks = await Promise.all(blockNumbers.map((blockNumber) => client.getBlock({ blockNumber })));
  return new Map(blocks.map((block) => [block.number!, new Date(Number(block.timestamp) * 1000)]));
}

const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/**
 * One bounded step of a chain's deposit monitor: scans Transfer logs of the supported tokens up to the
 * chain's safe head (head − confirmations, so a reorg shallower than that never reaches us), records
 * every transfer into a deposit address once, and signals the session when the accepted total covers
 * the option. Signals are repeated on a rescan (the workflow ignores repeats), so a crash between
 * recording and signalling loses nothing. RPC errors throw: the activity retry policy is the backoff.
 */
export function createChainMonitorActivities({ db, networks, temporal, logger }: ChainMonitorDependencies) {
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
    async scanDeposits({ chainId, monitorId, maxBlockRange }: ScanInput): Promise<ScanResult> {
      const network = networks.byChainId(chainId);
      if (!network) throw new Error(`unknown chain ${chainId}`);
      const client = clientFor(chainId);
      // No cache: viem keeps a block number for 4 s by default, which would delay detection by blocks.
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const safeHead = head - BigInt(network.confirmations);
      const checkpoint = (await readCheckpoint(db, monitorId)) ?? safeHead - BigInt(maxBlockRange);
      const fromBlock = checkpoint + 1n < 0n ? 0n : checkpoint + 1n;
      const toBlock =
        fromBlock + BigInt(maxBlockRange) - 1n < safeHead ? fromBlock + BigInt(maxBlockRange) - 1n : safeHead;
      if (toBlock < fromBlock) {
        return {
          fromBlock: fromBlock.toString(),
          toBlock: checkpoint.toString(),
          caughtUp: true,
          logs: 0,
          accepted: 0,
          late: 0,
        };
      }

      const tokens = new Map(network.tokens.map((token) => [token.address.toLowerCase(), token]));
      const logs = tokens.size
        ? await client.getLogs({
            address: [...tokens.values()].map((token) => token.address as Address),
            event: transferEvent,
            fromBlock,
            toBlock,
          })
        : [];
      const recipients = [...new Set(logs.map((log) => log.args.to!.toLowerCase()))];
      const targets = await findDepositTargets(db, chainId, recipients);
      // A flush swaps into the forwarder itself (the router pays USDe to it): those transfers are not payments.
      const matched = logs.filter((log) =>
        targets.some((target) => target.depositAddress.toLowerCase() === log.args.to!.toLowerCase()),
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
            entry.depositAddress.toLowerCase() === log.args.to!.toLowerCase() &&
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
          amount: log.args.value!.toString(),
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
      };
    },
  };
}

export type ChainMonitorActivities = ReturnType<typeof createChainMonitorActivities>;
