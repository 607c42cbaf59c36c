import { createPublicClient, http, type PublicClient } from 'viem';
import type { Config } from '../config';

/**
 * viem public clients per chain id, from RPC_URL_<chainId>. Created lazily and reused, so a
 * request path never builds a transport per call.
 */
export interface PublicClients {
  /** The client for `chainId`, or undefined when no RPC is configured for it. */
  forChain(chainId: number): PublicClient | undefined;
}

export function createPublicClients(config: Config): PublicClients {
  const clients = new Map<number, PublicClient>();
  return {
    forChain(chainId) {
      const cached = clients.get(chainId);
      if (cached) return cached;
      const url = (config as unknown as Record<string, string | undefined>)[`RPC_URL_${chainId}`];
      if (!url) return undefined;
      const client = createPublicClient({
        transport: http(url, { retryCount: 1, timeout: 10_000 }),
      }) as PublicClient;
      clients.set(chainId, client);
      return client;
    },
  };
}
