/**
 * The networks the service settles on. Static facts only; addresses (tokens, forwarder factory,
 * paymasters) come from the deployments file, RPC URLs from configuration (chain/networkRegistry.ts).
 */
export type NetworkName =
  'ethereum' | 'base' | 'arbitrum' | 'ethereum-sepolia' | 'base-sepolia' | 'arbitrum-sepolia';

export interface NetworkDefinition {
  network: NetworkName;
  chainId: number;
  displayName: string;
  /** Testnets carry sandbox sessions; mainnets carry live ones. */
  testnet: boolean;
  /** Where settlement ends as sUSDe: the chain itself on Ethereum, Ethereum (Sepolia) for layer-2s. */
  settlementChainId: number;
  /** Blocks a deposit must be buried under before funds are acted on (reorg safety). */
  confirmations: number;
  /** LayerZero V2 endpoint id (`EndpointId.*_V2_*` of @layerzerolabs/lz-definitions; checked in chain/layerZero.test.ts). */
  layerZeroEid: number;
}

const NETWORK_DEFINITIONS = [
  {
    network: 'ethereum',
    chainId: 1,
    displayName: 'Ethereum',
    testnet: false,
    settlementChainId: 1,
    confirmations: 12,
    layerZeroEid: 30101,
  },
  {
    network: 'base',
    chainId: 8453,
    displayName: 'Base',
    testnet: false,
    settlementChainId: 1,
    confirmations: 10,
    layerZeroEid: 30184,
  },
  {
    network: 'arbitrum',
    chainId: 42161,
    displayName: 'Arbitrum',
    testnet: false,
    settlementChainId: 1,
    confirmations: 10,
    layerZeroEid: 30110,
  },
  {
    network: 'ethereum-sepolia',
    chainId: 11155111,
    displayName: 'Ethereum Sepolia',
    testnet: true,
    settlementChainId: 11155111,
    confirmations: 3,
    layerZeroEid: 40161,
  },
  {
    network: 'base-sepolia',
    chainId: 84532,
    displayName: 'Base Sepolia',
    testnet: true,
    settlementChainId: 11155111,
    confirmations: 3,
    layerZeroEid: 40245,
  },
  {
    network: 'arbitrum-sepolia',
    chainId: 421614,
    displayName: 'Arbitrum Sepolia',
    testnet: true,
    settlementChainId: 11155111,
    confirmations: 3,
    layerZeroEid: 40231,
  },
] as const satisfies readonly NetworkDefinition[];

export const NETWORKS: readonly NetworkDefinition[] = NETWORK_DEFINITIONS;

/** A chain id the service knows, as a literal type (configuration names a variable per chain from it). */
export type KnownChainId = (typeof NETWORK_DEFINITIONS)[number]['chainId'];

/** The chain ids of NETWORKS, in the same order. */
export const KNOWN_CHAIN_IDS: readonly KnownChainId[] = NETWORK_DEFINITIONS.map((network) => network.chainId);

export function networkByChainId(chainId: number): NetworkDefinition | undefined {
  return NETWORKS.find((network) => network.chainId === chainId);
}
