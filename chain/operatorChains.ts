import {
  createWalletClient,
  defineChain,
  http,
  publicActions,
  type Account,
  type Chain,
  type Hex,
  type PublicActions,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ConfiguredNetwork, NetworkRegistry } from './networkRegistry';

export type OperatorClient = WalletClient<Transport, Chain, Account> & PublicActions<Transport, Chain>;

/**
 * The settlement operator's clients, one per configured chain: the only key allowed to flush
 * forwarders. Every send is numbered under the key's lock on its chain, across processes
 * (activities/lockedSends.ts), so any number of workers share one operator key.
 */
export interface OperatorChains {
  address: Hex;
  network(chainId: number): ConfiguredNetwork;
  client(chainId: number): OperatorClient;
}

export class ChainNotConfiguredError extends Error {
  override name = 'ChainNotConfiguredError';
  constructor(chainId: number, missing: string) {
    super(`chain ${chainId} cannot be settled on: ${missing}`);
  }
}

export function createOperatorChains({
  networks,
  operatorPrivateKey,
}: {
  networks: NetworkRegistry;
  operatorPrivateKey: Hex;
}): OperatorChains {
  // No nonce manager: nonces are taken from the chain under a lock shared by every worker
  // (activities/lockedSends.ts), never counted in one process's memory.
  const account = privateKeyToAccount(operatorPrivateKey);
  const clients = new Map<number, OperatorClient>();

  const network = (chainId: number): ConfiguredNetwork => {
    const found = networks.byChainId(chainId);
    if (!found) throw new ChainNotConfiguredError(chainId, 'unknown network');
    if (!found.rpcUrl) throw new ChainNotConfiguredError(chainId, `no RPC_URL_${chainId}`);
    return found;
  };

  return {
    address: account.address,
    network,
    client(chainId) {
      const cached = clients.get(chainId);
      if (cached) return cached;
      const { rpcUrl, displayName } = network(chainId);
      const chain = defineChain({
        id: chainId,
        name: displayName,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [rpcUrl!] } },
      });
      const client = createWalletClient({
        account,
        chain,
        transport: http(rpcUrl, { retryCount: 2, timeout: 10_000 }),
        pollingInterval: 250,
      }).extend(publicActions) as OperatorClient;
      clients.set(chainId, client);
      return client;
    },
  };
}
