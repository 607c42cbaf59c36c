import type { Hex } from 'viem';
import type { Logger } from '../api/logger';
import type { PublicClients } from '../chain/publicClients';

/**
 * A chain's current fee level, which the fee bounds of signed operations are measured against: the
 * latest block's base fee and the node's suggested priority fee (`eth_maxPriorityFeePerGas`). Reads are
 * shared by concurrent requests and reused for a second, so a burst of signing costs one pair of reads.
 */
export interface ChainFeeLevel {
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface ChainFees {
  /** The chain's current fees, or undefined when they cannot be read. */
  current(chainId: number): Promise<ChainFeeLevel | undefined>;
}

const REUSE_MS = 1_000;

export function createChainFees({
  publicClients,
  logger,
  now = () => Date.now(),
}: {
  publicClients: PublicClients;
  logger: Logger;
  now?: () => number;
}): ChainFees {
  const recent = new Map<number, { at: number; reading: Promise<ChainFeeLevel | undefined> }>();

  const read = async (chainId: number): Promise<ChainFeeLevel | undefined> => {
    const client = publicClients.forChain(chainId);
    if (!client) return undefined;
    try {
      const [block, priority] = await Promise.all([
        client.getBlock({ blockTag: 'latest' }),
        client.request({ method: 'eth_maxPriorityFeePerGas' }) as Promise<Hex>,
      ]);
      if (block.baseFeePerGas === null) return undefined;
      return { baseFeePerGas: block.baseFeePerGas, maxPriorityFeePerGas: BigInt(priority) };
    } catch (error) {
      logger.warn({ errorName: (error as Error)?.name, chainId }, 'chain gas fees could not be read');
      return undefined;
    }
  };

  return {
    current(chainId) {
      const cached = recent.get(chainId);
      if (cached && now() - cached.at < REUSE_MS) return cached.reading;
      const reading = read(chainId);
      recent.set(chainId, { at: now(), reading });
      // A failed read is not reused: the next request tries again.
      void reading.then((fees) => {
        if (fees === undefined && recent.get(chainId)?.reading === reading) recent.delete(chainId);
      });
      return reading;
    },
  };
}
