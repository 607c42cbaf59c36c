import { parseAbi, type Address, type PublicClient } from 'viem';
import { getBlock, readContract } from 'viem/actions';

/**
 * ETH/USD from a Chainlink-style aggregator (`latestRoundData()`, 8 decimals). Local chains get a
 * settable stand-in (contracts/local/LocalPriceFeed.sol) under the deployment key `priceFeed`.
 */

export const CHAINLINK_AGGREGATOR_ABI = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
]);

export interface EthUsdRound {
  /** USD per ETH with ETH_USD_FEED_DECIMALS decimals. */
  answer: bigint;
  /** Unix seconds of the answer. */
  updatedAt: bigint;
  /** Unix seconds of the chain's latest block: what the answer's age is measured against. */
  blockTimestamp: bigint;
}

/** Reads the feed's latest round and the chain's latest block time together. */
export async function readEthUsdRound(client: PublicClient, feed: Address): Promise<EthUsdRound> {
  const [round, block] = await Promise.all([
    readContract(client, { address: feed, abi: CHAINLINK_AGGREGATOR_ABI, functionName: 'latestRoundData' }),
    getBlock(client, { blockTag: 'latest' }),
  ]);
  return { answer: round[1], updatedAt: round[3], blockTimestamp: block.timestamp };
}
