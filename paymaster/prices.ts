import { isAddress, type Address } from 'viem';
import type { Logger } from '../logging/logger';
import type { NetworkRegistry } from '../chain/networkRegistry';
import { readEthUsdRound } from '../chain/priceFeeds';
import type { PublicClients } from '../chain/publicClients';
import type { Config } from '../config';

/**
 * The ETH/USD price a sponsorship decision uses, per chain: the chain's Chainlink-style aggregator
 * (PAYMASTER_PRICE_FEED_<chainId>, else the deployments' `priceFeed`). A missing feed, a failed read,
 * a non-positive answer or one older than PAYMASTER_PRICE_MAX_AGE_SEC (against the chain's latest
 * block, as on-chain consumers measure it) means no price.
 */
export interface EthUsdPrice {
  /** USD per ETH with 8 decimals. */
  answer: bigint;
  updatedAt: bigint;
}

export interface EthUsdPrices {
  /** The fresh price on `chainId`, or undefined when there is none. */
  fresh(chainId: number): Promise<EthUsdPrice | undefined>;
}

export function createEthUsdPrices({
  config,
  publicClients,
  networks,
  logger,
}: {
  config: Config;
  publicClients: PublicClients;
  networks: NetworkRegistry;
  logger: Logger;
}): EthUsdPrices {
  const feedOf = (chainId: number): Address | undefined => {
    const configured = (config as unknown as Record<string, string | undefined>)[
      `PAYMASTER_PRICE_FEED_${chainId}`
    ];
    if (configured && isAddress(configured, { strict: false })) return configured as Address;
    return networks.byChainId(chainId)?.contracts.priceFeed;
  };
  const maxAge = BigInt(config.PAYMASTER_PRICE_MAX_AGE_SEC);
  // Concurrent requests on one chain share one read instead of each calling the RPC.
  const inFlight = new Map<number, Promise<EthUsdPrice | undefined>>();

  const read = async (chainId: number): Promise<EthUsdPrice | undefined> => {
    const feed = feedOf(chainId);
    const client = publicClients.forChain(chainId);
    if (!feed || !client) return undefined;
    try {
      const round = await readEthUsdRound(client, feed);
      if (round.answer <= 0n || round.blockTimestamp - round.updatedAt > maxAge) return undefined;
      return { answer: round.answer, updatedAt: round.updatedAt };
    } catch (error) {
      logger.warn({ err: error, chainId, feed }, 'ETH/USD price feed read failed');
      return undefined;
    }
  };

  return {
    fresh(chainId) {
      const pending = inFlight.get(chainId);
      if (pending) return pending;
      const reading = read(chainId).finally(() => inFlight.delete(chainId));
      inFlight.set(chainId, reading);
      return reading;
    },
  };
}
