import { createPublicClient, http, type PublicClient } from 'viem';
import type { Config } from '../config';
import type { NetworkRegistry } from './networkRegistry';

/**
 * The one retry policy of our public RPC reads (api, signer, and the monitor and receipt activities): a
 * failed call is tried once more, and each try waits at most 10 s. The callers' own policies (Temporal's
 * activity retries, the client's retry of a request) are the backoff beyond that.
 */
export const PUBLIC_RPC_POLICY = { retryCount: 1, timeout: 10_000 } as const;

/**
 * viem public clients per chain id. Created lazily and reused, so neither a request path nor a
 * monitor scan builds a transport per call.
 */
export interface PublicClients {
  /** The client for `chainId`, or undefined when no RPC is configured for it. */
  forChain(chainId: number): PublicClient | undefined;
}

/**
 * From RPC_URL_<chainId> (a `Config`), or from a network registry (RPC_URL_<chainId>, else the
 * deployments file's URL).
 */
export function createPublicClients(source: Config | NetworkRegistry): PublicClients {
  const rpcUrlOf =
    'byChainId' in source
      ? (chainId: number) => source.byChainId(chainId)?.rpcUrl
      : (chainId: number) => (source as unknown as Record<string, string | undefined>)[`RPC_URL_${chainId}`];
  const clients = new Map<number, PublicClient>();
  return {
    forChain(chainId) {
      const cached = clients.get(chainId);
      if (cached) return cached;
      const url = rpcUrlOf(chainId);
      if (!url) return undefined;
      const client = createPublicClient({ transport: http(url, PUBLIC_RPC_POLICY) }) as PublicClient;
      clients.set(chainId, client);
      return client;
    },
  };
}
