import { type Chain, type PublicClient, createPublicClient, http } from 'viem';
import { arbitrum, arbitrumSepolia, base, baseSepolia, mainnet, sepolia } from 'viem/chains';
import { loadDeployments } from '../../chain/deployments';
import {
  type DelegationFrameworkContracts,
  resolveDelegationFramework,
} from '../../chain/delegationFramework';
import { ToolFailure } from '../toolResults';

/**
 * The chains create_session_key works on: an RPC URL (STABLEPAY_RPC_URL_<chainId>, else the deployments
 * file's, else the network's public endpoint) and the Delegation Framework there (the deployments file's,
 * e.g. the dev stack's `.dev/stack.json`, else MetaMask's published deployment).
 */

export interface SessionKeyChain {
  chainId: number;
  client: PublicClient;
  framework: DelegationFrameworkContracts;
}

export interface SessionKeyChains {
  /** Throws a ToolFailure naming what is missing for `chainId`. */
  get(chainId: number): SessionKeyChain;
}

const PUBLIC_NETWORKS: Chain[] = [mainnet, base, arbitrum, sepolia, baseSepolia, arbitrumSepolia];

export function createSessionKeyChains({
  deploymentsFile,
  rpcUrls,
}: {
  deploymentsFile?: string;
  rpcUrls: Record<number, string>;
}): SessionKeyChains {
  const deployments = loadDeployments(deploymentsFile);
  const clients = new Map<number, SessionKeyChain>();
  return {
    get(chainId) {
      const known = clients.get(chainId);
      if (known) return known;
      const deployment = deployments.find((entry) => entry.chainId === chainId);
      const rpcUrl =
        rpcUrls[chainId] ??
        deployment?.rpcUrl ??
        PUBLIC_NETWORKS.find((network) => network.id === chainId)?.rpcUrls.default.http[0];
      if (!rpcUrl) {
        throw new ToolFailure(
          `chain ${chainId} has no RPC URL: set STABLEPAY_RPC_URL_${chainId} or STABLEPAY_DEPLOYMENTS_FILE`,
        );
      }
      const framework = resolveDelegationFramework(chainId, deployment?.contracts);
      if (!framework) throw new ToolFailure(`chain ${chainId} has no Delegation Framework deployment`);
      const chain: SessionKeyChain = {
        chainId,
        client: createPublicClient({ transport: http(rpcUrl) }) as PublicClient,
        framework,
      };
      clients.set(chainId, chain);
      return chain;
    },
  };
}
