import type { Address, Hex } from 'viem';

/**
 * The visitor's EIP-1193 wallet (`window.ethereum`): the page never calls a node itself, every read and
 * write goes through it.
 */

interface Eip1193Provider {
  request(arguments_: { method: string; params?: unknown[] }): Promise<unknown>;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

const RECEIPT_POLL_MS = 500;

export const provider = window.ethereum;

/** The connected account, once the visitor shared one. */
export let account: Address | null = null;

export function request<T>(method: string, params: unknown[] = []): Promise<T> {
  return provider!.request({ method, params }) as Promise<T>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends a transaction from the account and waits for its receipt; a revert is an error. */
export async function send(to: Address, data: Hex): Promise<void> {
  const hash = await request<Hex>('eth_sendTransaction', [{ from: account, to, data }]);
  for (;;) {
    const receipt = await request<{ status: Hex } | null>('eth_getTransactionReceipt', [hash]);
    if (receipt) {
      if (receipt.status !== '0x1') throw new Error(`The transaction reverted (${hash})`);
      return;
    }
    await sleep(RECEIPT_POLL_MS);
  }
}

/** Asks the wallet to switch to the site's chain when it is on another. */
export async function ensureChain(chainId: number): Promise<void> {
  const current = await request<Hex>('eth_chainId');
  if (parseInt(current, 16) === chainId) return;
  await request('wallet_switchEthereumChain', [{ chainId: `0x${chainId.toString(16)}` }]);
}

/** Asks for the visitor's account and moves to the site's chain; the account shared. */
export async function connectAccount(chainId: number): Promise<Address> {
  const accounts = await request<Address[]>('eth_requestAccounts');
  account = accounts[0] ?? null;
  if (!account) throw new Error('The wallet shared no account');
  await ensureChain(chainId);
  return account;
}

/** The chain's clock: the latest block's timestamp, in seconds. */
export async function chainTime(): Promise<number> {
  const block = await request<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
  return Number(BigInt(block.timestamp));
}
