import type { Address } from 'viem';
import type { Config } from '../config';
import { loadDeployments, type ChainContracts } from './deployments';
import { STABLECOINS, type StablecoinSymbol } from './stablecoins';
import { NETWORKS, type NetworkDefinition } from '../config/networks';

export interface TokenDeployment {
  symbol: StablecoinSymbol;
  address: Address;
  decimals: number;
}

/** A network with what this deployment knows about it. */
export interface ConfiguredNetwork extends NetworkDefinition {
  rpcUrl?: string;
  forwarderFactory?: Address;
  forwarderImplementation?: Address;
  /** The CappedForwarderFactory (sessions that hold an overpayment) and its implementation, when deployed. */
  cappedForwarderFactory?: Address;
  cappedForwarderImplementation?: Address;
  tokens: TokenDeployment[];
  contracts: Record<string, Address>;
}

export interface NetworkRegistry {
  all(): ConfiguredNetwork[];
  byChainId(chainId: number): ConfiguredNetwork | undefined;
  /** Networks that can take payments for a session of this class: right class, factory deployed. */
  paymentNetworks(sandboxMode: boolean): ConfiguredNetwork[];
}

/** Joins the static network list with the deployments file and the RPC URLs from configuration. */
export function createNetworkRegistry(
  config: Config,
  deployments: ChainContracts[] = loadDeployments(config.DEPLOYMENTS_FILE),
): NetworkRegistry {
  const networks = NETWORKS.map((network): ConfiguredNetwork => {
    const deployment = deployments.find((entry) => entry.chainId === network.chainId);
    const contracts = deployment?.contracts ?? {};
    const configuredRpc = (config as unknown as Record<string, string | undefined>)[
      `RPC_URL_${network.chainId}`
    ];
    return {
      ...network,
      rpcUrl: configuredRpc ?? deployment?.rpcUrl,
      forwarderFactory: contracts.forwarderFactory,
      forwarderImplementation: contracts.forwarderImplementation,
      cappedForwarderFactory: contracts.cappedForwarderFactory,
      cappedForwarderImplementation: contracts.cappedForwarderImplementation,
      tokens: STABLECOINS.flatMap((token) =>
        contracts[token.contractKey]
          ? [{ symbol: token.symbol, address: contracts[token.contractKey]!, decimals: token.decimals }]
          : [],
      ),
      contracts,
    };
  });
  return {
    all: () => networks,
    byChainId: (chainId) => networks.find((network) => network.chainId === chainId),
    paymentNetworks: (sandboxMode) =>
      networks.filter(
        (network) =>
          network.testnet === sandboxMode && network.forwarderFactory && network.forwarderImplementation,
      ),
  };
}
