import {
  createNonceManager,
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
import { jsonRpc } from 'viem/nonce';
import type { ConfiguredNetwork, NetworkRegistry } from './networkRegistry';

export type OperatorClient = WalletClient<Transport, Chain, Account> & PublicActions<Transport, Chain>;

/**
 * The settlement operator's clients, one per configured chain: the only key allowed to flush
 * forwarders. Nonces come from one manager per chain in this process, so concurrent activities of a
 * worker never collide; several worker processes need one operator key each (see docs/operations.md).
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
  const account = privateKeyToAccount(operatorPrivateKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
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
