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
import { TestStablecoin } from '../../contracts/artifacts';
import { deployDeterministic, deterministicDeploymentAddress } from '../../chain/deterministicDeployer';
import { STABLECOINS, type StablecoinSymbol } from '../../chain/stablecoins';

/** The mintable stand-ins' ERC-20 names (their symbols and decimals are the real tokens'). */
const LOCAL_NAMES: Record<StablecoinSymbol, string> = {
  USDC: 'USD Coin (local)',
  USDT: 'Tether USD (local)',
  USDe: 'USDe (local)',
};

export type LocalStablecoinAddresses = Record<(typeof STABLECOINS)[number]['contractKey'], Address>;

function initCode(token: (typeof STABLECOINS)[number]): Hex {
  const args = encodeAbiParameters(
    [{ type: 'string' }, { type: 'string' }, { type: 'uint8' }],
    [LOCAL_NAMES[token.symbol], token.symbol, token.decimals],
  );
  return `${TestStablecoin.bytecode}${args.slice(2)}` as Hex;
}

const saltOf = (symbol: string): Hex => keccak256(toHex(`stablepay.local.${symbol}`));

/** Where the local stand-in of each stablecoin lives (the same address on every local chain). */
export function localStablecoinAddresses(): LocalStablecoinAddresses {
  return Object.fromEntries(
    STABLECOINS.map((token) => [
      token.contractKey,
      deterministicDeploymentAddress({ initCode: initCode(token), salt: saltOf(token.symbol) }),
    ]),
  ) as LocalStablecoinAddresses;
}

/** Deploys the mintable local USDC, USDT and USDe (skipping those already there). */
export async function deployLocalStablecoins(
  client: Client<Transport, Chain, Account>,
): Promise<LocalStablecoinAddresses> {
  const deployed = await Promise.all(
    STABLECOINS.map(async (token) => [
      token.contractKey,
      await deployDeterministic(client, { initCode: initCode(token), salt: saltOf(token.symbol) }),
    ]),
  );
  return Object.fromEntries(deployed) as LocalStablecoinAddresses;
}
