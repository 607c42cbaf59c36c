import type { Address } from 'viem';
import { resolveDelegationFramework, type DelegationFrameworkContracts } from '../chain/delegationFramework';
import type { ConfiguredNetwork, NetworkRegistry, TokenDeployment } from '../chain/networkRegistry';

/**
 * Where a customer can subscribe (issue 42): every chain this deployment reaches (an RPC URL) with the
 * Delegation Framework, a forwarder factory (each period's session is paid there) and a stablecoin, each with the subscription executor — the delegate a
 * periodic permission must name. One executor key serves every chain, so its address is the same on each;
 * it is listed per chain because a permission is granted per chain. Without an executor address, nowhere.
 */
export interface SubscriptionChain {
  network: ConfiguredNetwork;
  executor: Address;
  framework: DelegationFrameworkContracts;
  tokens: TokenDeployment[];
}

export function subscriptionChains(
  networks: NetworkRegistry,
  executor: Address | undefined,
): SubscriptionChain[] {
  if (!executor) return [];
  return networks.all().flatMap((network) => {
    const framework = resolveDelegationFramework(network.chainId, network.contracts);
    // A period's invoice is a payment session on the chain: it needs the forwarder factory too.
    const invoiceable = network.forwarderFactory && network.forwarderImplementation;
    if (!network.rpcUrl || !framework || !invoiceable || network.tokens.length === 0) return [];
    return [{ network, executor, framework, tokens: network.tokens }];
  });
}

export function subscriptionChainOf(
  networks: NetworkRegistry,
  executor: Address | undefined,
  chainId: number,
): SubscriptionChain | undefined {
  return subscriptionChains(networks, executor).find((chain) => chain.network.chainId === chainId);
}
