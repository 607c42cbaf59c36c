import {
  encodeAbiParameters,
  keccak256,
  toHex,
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
} from 'viem';
import { LocalPriceFeed } from '../../contracts/artifacts';
import { deployDeterministic } from '../../chain/deterministicDeployer';
import { ETH_USD_FEED_DECIMALS } from '../../money/usdPriceAnswers';

/** Local chains' settable ETH/USD stand-in (contracts/local/LocalPriceFeed.sol), deployment key `priceFeed`. */

/** The local feed's starting answer: 3,000 USD per ETH. */
export const LOCAL_ETH_USD_ANSWER = 3_000n * 10n ** BigInt(ETH_USD_FEED_DECIMALS);

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
