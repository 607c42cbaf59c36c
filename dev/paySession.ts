import { createPublicClient, createWalletClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { retryingDevFetch } from './retryingDevFetch';
import type { ChainDeployment } from './stackDescription';
import { DevApiError } from './walletLogin';

/** The local stablecoins' open mint (dev/chains/localStablecoins.ts): anyone may mint to anyone. */
const mintAbi = [
  {
    type: 'function',
    name: 'mint',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [],
  },
] as const;

/** The payment option fields of the public session read that paying needs. */
export interface SessionPaymentOption {
  chainId: number;
  network: string;
  symbol: string;
  tokenAddress: Address;
  decimals: number;
  amount: string;
  depositAddress: Address;
}

/** The session offers no option for the asked symbol and chain. */
export class NoSuchPaymentOptionError extends Error {
  override name = 'NoSuchPaymentOptionError';
}

export interface PaySessionParameters {
  apiUrl: string;
  chains: Pick<ChainDeployment, 'chainId' | 'rpcUrl'>[];
  /** The paying wallet: it mints the amount to itself, then transfers it. */
  privateKey: Hex;
  sessionId: string;
  symbol?: string;
  /** Defaults to the first chain the session offers `symbol` on. */
  chainId?: number;
}

/**
 * Pays a session the way a customer's wallet does: reads the session's payment options from the public
 * read, mints the option's exact base-unit amount of the local token to the payer and transfers it to
 * the option's deposit address. Returns the option paid and the transfer's hash.
 */
export async function paySession({
  apiUrl,
  chains,
  privateKey,
  sessionId,
  symbol = 'USDC',
  chainId,
}: PaySessionParameters): Promise<{ option: SessionPaymentOption; txHash: Hex }> {
  const response = await retryingDevFetch(`${apiUrl}/v1/sessions/${encodeURIComponent(sessionId)}`);
  if (!response.ok) throw new DevApiError('GET /v1/sessions/{id}', response.status, await response.text());
  const { paymentOptions } = (await response.json()) as { paymentOptions: SessionPaymentOption[] };
  const option = paymentOptions.find(
    (candidate) =>
      candidate.symbol.toLowerCase() === symbol.toLowerCase() &&
      (chainId === undefined || candidate.chainId === chainId),
  );
  if (!option) {
    const offered = paymentOptions
      .map((candidate) => `${candidate.symbol} on ${candidate.chainId}`)
      .join(', ');
    throw new NoSuchPaymentOptionError(
      `session ${sessionId} offers no ${symbol}${chainId === undefined ? '' : ` on chain ${chainId}`} (it offers ${offered || 'nothing'})`,
    );
  }
  const chain = chains.find((candidate) => candidate.chainId === option.chainId);
  if (!chain) throw new NoSuchPaymentOptionError(`the stack file has no RPC URL for chain ${option.chainId}`);

  const account = privateKeyToAccount(privateKey);
  const transport = http(chain.rpcUrl);
  const reader = createPublicClient({ transport });
  const wallet = createWalletClient({ account, transport });
  const viemChain = {
    id: option.chainId,
    name: option.network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
  };
  const amount = BigInt(option.amount);
  const minted = await wallet.writeContract({
    chain: viemChain,
    address: option.tokenAddress,
    abi: mintAbi,
    functionName: 'mint',
    args: [account.address, amount],
  });
  await expectSuccess(reader, minted, 'mint');
  const txHash = await wallet.writeContract({
    chain: viemChain,
    address: option.tokenAddress,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [option.depositAddress, amount],
  });
  await expectSuccess(reader, txHash, 'transfer');
  return { option, txHash };
}

async function expectSuccess(
  reader: { waitForTransactionReceipt(args: { hash: Hex }): Promise<{ status: string }> },
  hash: Hex,
  what: string,
): Promise<void> {
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`the ${what} transaction ${hash} reverted`);
}
