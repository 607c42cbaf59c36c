import {
  encodeAbiParameters,
  keccak256,
  parseAbi,
  toHex,
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type PublicClient,
  type Transport,
} from 'viem';
import { getBlock, readContract } from 'viem/actions';
import { LocalPriceFeed } from '../contracts/artifacts';
import { deployDeterministic } from './deterministicDeployer';

/**
 * ETH/USD from a Chainlink-style aggregator (`latestRoundData()`, 8 decimals). Local chains get a
 * settable stand-in (contracts/local/LocalPriceFeed.sol) under the deployment key `priceFeed`.
 */

export const CHAINLINK_AGGREGATOR_ABI = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
]);

/** ETH/USD answers carry 8 decimals on Chainlink; the local feed uses the same. */
export const ETH_USD_FEED_DECIMALS = 8;

/** The local feed's starting answer: 3,000 USD per ETH. */
export const LOCAL_ETH_USD_ANSWER = 3_000n * 10n ** BigInt(ETH_USD_FEED_DECIMALS);

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

function localPriceFeedInitCode(owner: Address, answer: bigint): Hex {
  const args = encodeAbiParameters([{ type: 'address' }, { type: 'int256' }], [owner, answer]);
  return `${LocalPriceFeed.bytecode}${args.slice(2)}` as Hex;
}

/** Deploys the local ETH/USD feed (skipped when already there), owned by `owner`, fresh with every block. */
export async function deployLocalPriceFeed(
  client: Client<Transport, Chain, Account>,
  { owner, answer = LOCAL_ETH_USD_ANSWER }: { owner: Address; answer?: bigint },
): Promise<{ priceFeed: Address }> {
  const priceFeed = await deployDeterministic(client, {
    initCode: localPriceFeedInitCode(owner, answer),
    salt: keccak256(toHex('stablepay.local.priceFeed')),
  });
  return { priceFeed };
}
