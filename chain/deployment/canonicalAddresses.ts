import { readFileSync } from 'node:fs';
import { EndpointId } from '@layerzerolabs/lz-definitions';
import { SWAP_ROUTER_02_ADDRESSES, V3_CORE_FACTORY_ADDRESSES } from '@uniswap/sdk-core';
import { type Address, getAddress } from 'viem';
import { entryPoint07Address, entryPoint08Address } from 'viem/account-abstraction';
import { NETWORKS, type NetworkName } from '../../config/networks';

/**
 * The external contracts a deployment must point at, per network, and where each expectation comes from. Read
 * from the protocols' own npm deployment packages where they publish one: LayerZero's endpoint addresses
 * (`@layerzerolabs/lz-evm-sdk-v2` deployments) and endpoint ids (`@layerzerolabs/lz-definitions`), Uniswap's
 * SwapRouter02 and v3 factory (`@uniswap/sdk-core`), the ERC-4337 EntryPoints (viem's constants). Ethena
 * publishes no npm package: its mainnet USDe, sUSDe and USDe OFT addresses are pinned here from Ethena's
 * documentation (docs.ethena.fi, "Key Addresses"), and its Ethereum Sepolia USDe and sUSDe from Ethena's
 * testnet deployment; the verification step cross-checks them on-chain (sUSDe's asset is USDe, its cooldown
 * interface answers). The other testnets' Ethena contracts are the operator's configuration.
 */

export type CanonicalKey =
  | 'layerZeroEndpoint'
  | 'uniswapSwapRouter02'
  | 'uniswapV3Factory'
  | 'entryPointV07'
  | 'entryPointV08'
  | 'usde'
  | 'susde'
  | 'usdeOft';

export interface CanonicalAddress {
  address: Address;
  /** Where the expectation was read from. */
  source: string;
}

export type CanonicalAddresses = Partial<Record<CanonicalKey, CanonicalAddress>>;

/** LayerZero's deployment folder names (lz-evm-sdk-v2 `deployments/<name>`). */
const LAYER_ZERO_DEPLOYMENT: Record<NetworkName, string> = {
  ethereum: 'ethereum-mainnet',
  base: 'base-mainnet',
  arbitrum: 'arbitrum-mainnet',
  'ethereum-sepolia': 'sepolia-testnet',
  'base-sepolia': 'basesep-testnet',
  'arbitrum-sepolia': 'arbsep-testnet',
};

/** The LayerZero endpoint id each network has in @layerzerolabs/lz-definitions. */
export const LAYER_ZERO_EIDS: Record<NetworkName, number> = {
  ethereum: EndpointId.ETHEREUM_V2_MAINNET,
  base: EndpointId.BASE_V2_MAINNET,
  arbitrum: EndpointId.ARBITRUM_V2_MAINNET,
  'ethereum-sepolia': EndpointId.SEPOLIA_V2_TESTNET,
  'base-sepolia': EndpointId.BASESEP_V2_TESTNET,
  'arbitrum-sepolia': EndpointId.ARBSEP_V2_TESTNET,
};

const ETHENA_DOCS = "Ethena's documentation (no npm package), checked on-chain";
/**
 * Ethena's published addresses. USDe and the sUSDe staking vault live on Ethereum (and Ethereum Sepolia); the USDe
 * OFT is the lockbox adapter there and USDe itself on the layer-2s. Where sUSDe is listed, the deployment also
 * puts the yield vault factory (docs/yield.md, "Networks").
 */
const ETHENA: Partial<Record<NetworkName, Partial<Record<'usde' | 'susde' | 'usdeOft', Address>>>> = {
  ethereum: {
    usde: '0x4c9EDD5852cd905f086C759E8383e09bff1E68B3',
    susde: '0x9D39A5DE30e57443BfF2A8307A4256c8797A3497',
    usdeOft: '0x5d3a1Ff2b6BAb83b63cd9AD0787074081a52ef34',
  },
  base: {
    usde: '0x5d3a1Ff2b6BAb83b63cd9AD0787074081a52ef34',
    usdeOft: '0x5d3a1Ff2b6BAb83b63cd9AD0787074081a52ef34',
  },
  arbitrum: {
    usde: '0x5d3a1Ff2b6BAb83b63cd9AD0787074081a52ef34',
    usdeOft: '0x5d3a1Ff2b6BAb83b63cd9AD0787074081a52ef34',
  },
  'ethereum-sepolia': {
    usde: '0xf805ce4F96e0EdD6f0b6cd4be22B34b92373d696',
    susde: '0x1B6877c6Dac4b6De4c5817925DC40E2BfdAFc01b',
  },
};

function layerZeroEndpoint(network: NetworkName): CanonicalAddress {
  const name = LAYER_ZERO_DEPLOYMENT[network];
  const file = require.resolve(`@layerzerolabs/lz-evm-sdk-v2/deployments/${name}/EndpointV2.json`);
  const { address } = JSON.parse(readFileSync(file, 'utf8')) as { address: string };
  return {
    address: getAddress(address),
    source: `@layerzerolabs/lz-evm-sdk-v2 deployments/${name}/EndpointV2.json`,
  };
}

/** What `chainId`'s external contracts must be; keys without a published expectation are absent. */
export function canonicalAddresses(chainId: number): CanonicalAddresses {
  const network = NETWORKS.find((entry) => entry.chainId === chainId);
  if (!network) return {};
  const canonical: CanonicalAddresses = {
    layerZeroEndpoint: layerZeroEndpoint(network.network),
    uniswapSwapRouter02: {
      address: getAddress(SWAP_ROUTER_02_ADDRESSES(chainId)),
      source: '@uniswap/sdk-core SWAP_ROUTER_02_ADDRESSES',
    },
    entryPointV07: { address: entryPoint07Address, source: 'viem entryPoint07Address' },
    entryPointV08: { address: entryPoint08Address, source: 'viem entryPoint08Address' },
  };
  const factory = V3_CORE_FACTORY_ADDRESSES[chainId];
  if (factory)
    canonical.uniswapV3Factory = {
      address: getAddress(factory),
      source: '@uniswap/sdk-core V3_CORE_FACTORY_ADDRESSES',
    };
  for (const [key, address] of Object.entries(ETHENA[network.network] ?? {}))
    canonical[key as 'usde' | 'susde' | 'usdeOft'] = { address, source: ETHENA_DOCS };
  return canonical;
}
