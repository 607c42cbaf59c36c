import { createWalletClient, defineChain, http, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/**
 * A wallet (and public) client of one local chain for a bench account. `pollingInterval` also sets
 * viem's cache time, so receipts and block numbers are seen within 50 ms, not viem's default 4 s.
 */
export function benchWalletClient(rpcUrl: string, chainId: number, privateKey: Hex) {
  const chain = defineChain({
    id: chainId,
    name: `local ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain,
    transport: http(rpcUrl),
    pollingInterval: 50,
  }).extend(publicActions);
}

export type BenchWalletClient = ReturnType<typeof benchWalletClient>;
