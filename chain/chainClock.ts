import type { Logger } from '../logging/logger';
import type { PublicClients } from './publicClients';
import { shareChainReads } from './sharedChainReads';

/**
 * The chains' own time: the latest block's timestamp. What a sponsorship policy's budget periods roll
 * over by (paymaster/limits/policyBudgets.ts), so a server whose clock runs ahead (or is set ahead)
 * never opens a new period early, and one that runs behind never keeps an old one open.
 */
export interface ChainClocks {
  /** The chain's latest block time, or undefined when the chain cannot be read. */
  latest(chainId: number): Promise<Date | undefined>;
}

/** How long a read is reused: under the block time of every chain we serve but Arbitrum's, whose blocks are finer than this clock needs. */
const REUSE_MS = 1_000;

/**
 * Reads block times through the chains' RPCs, only when asked (a policy without budgets never asks).
 * Concurrent requests share one read and a read is reused for a second, so a burst costs one
 * `eth_getBlockByNumber` per chain; a failed read is not reused.
 */
export function createChainClocks({
  publicClients,
  logger,
  now = () => Date.now(),
}: {
  publicClients: PublicClients;
  logger?: Logger;
  now?: () => number;
}): ChainClocks {
  const read = async (chainId: number): Promise<Date | undefined> => {
    const client = publicClients.forChain(chainId);
    if (!client) return undefined;
    try {
      const block = await client.getBlock({ blockTag: 'latest' });
      return new Date(Number(block.timestamp) * 1000);
    } catch (error) {
      // Transport errors may carry the RPC URL (and a provider key in it): only the error's name is logged.
      logger?.warn({ errorName: (error as Error)?.name, chainId }, 'chain time could not be read');
      return undefined;
    }
  };

  return { latest: shareChainReads(read, { reuseMs: REUSE_MS, now }) };
}
