import { isAddress, type Address } from 'viem';
import type { Logger } from '../../logging/logger';
import type { NetworkRegistry } from '../../chain/networkRegistry';
import { readEthUsdRound } from '../../chain/priceFeeds';
import type { PublicClients } from '../../chain/publicClients';
import type { Config } from '../../config';

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

/** How long a fresh price read is reused (milliseconds). */
export const PRICE_REUSE_MS = 1_000;

/**
 * Price readings shared by key: concurrent requests share one read, a reading is reused for
 * PRICE_REUSE_MS, and no answer (stale, unreadable) is never reused, so the next request reads again.
 */
export function recentReadings<Key, Value>(
  now: () => number,
): (key: Key, read: () => Promise<Value | undefined>) => Promise<Value | undefined> {
  const recent = new Map<Key, { at: number; reading: Promise<Value | undefined> }>();
  return (key, read) => {
    const cached = recent.get(key);
    if (cached && now() - cached.at < PRICE_REUSE_MS) return cached.reading;
    const entry = { at: now(), reading: read() };
    recent.set(key, entry);
    void entry.reading.then((value) => {
      if (value === undefined && recent.get(key) === entry) recent.delete(key);
    });
    return entry.reading;
  };
}

export function createEthUsdPrices({
  config,
  publicClients,
  networks,
  logger,
  now = () => Date.now(),
}: {
  config: Config;
  publicClients: PublicClients;
  networks: NetworkRegistry;
  logger: Logger;
  now?: () => number;
}): EthUsdPrices {
  const feedOf = (chainId: number): Address | undefined => {
    const configured = (config as unknown as Record<string, string | undefined>)[
      `PAYMASTER_PRICE_FEED_${chainId}`
    ];
    if (configured && isAddress(configured, { strict: false })) return configured as Address;
    return networks.byChainId(chainId)?.contracts.priceFeed;
  };
  const maxAge = BigInt(config.PAYMASTER_PRICE_MAX_AGE_SEC);
  // Concurrent requests on one chain share one read instead of each calling the RPC, and a fresh price
  // is reused for PRICE_REUSE_MS (one local block; the chain's fee levels are reused as long): an
  // aggregator update is seen within a second, and the freshness rule is hours, not seconds.
  const reuseRecent = recentReadings<number, EthUsdPrice>(now);

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
    fresh: (chainId) => reuseRecent(chainId, () => read(chainId)),
  };
}
