import { get, post } from './api';
import type { LoginResult } from './types';

/** The EIP-1193 provider a wallet extension injects (MetaMask, Coinbase Wallet, a smart-account wallet). */
interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

export function walletAvailable(): boolean {
  return typeof window.ethereum?.request === 'function';
}

/** UTF-8 text as 0x hex, the form personal_sign takes. */
function toHex(text: string): string {
  return `0x${Array.from(new TextEncoder().encode(text), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Sign-In with Ethereum through the login routes: ask the wallet for its account and chain, fetch the
 * payload for them, have the wallet sign its exact message (personal_sign: an EOA or, through ERC-1271
 * or ERC-6492, a smart-contract wallet), and trade the signature for a session token.
 */
export async function signInWithWallet(): Promise<LoginResult> {
  const provider = window.ethereum;
  if (!provider) throw new Error('No browser wallet found: install one, or sign in with an e-mail code');
  const accounts = (await provider.request({ method: 'eth_requestAccounts' })) as string[];
  const address = accounts[0];
  if (!address) throw new Error('The wallet shared no account');
  const chainHex = (await provider.request({ method: 'eth_chainId' })) as string;
  const chainId = Number.parseInt(chainHex, 16);
  const query = new URLSearchParams({ address, ...(chainId > 0 ? { chainId: String(chainId) } : {}) });
  const payload = await get<{ message: string } & Record<string, unknown>>(`/v1/auth/login-payload?${query}`);
  const signature = (await provider.request({
    method: 'personal_sign',
    params: [toHex(payload.message), address],
  })) as string;
  return post<LoginResult>('/v1/auth/verify', { payload, signature });
}

/**
 * Has the browser wallet sign `message` (personal_sign) as `address`: a smart-account wallet signs as the
 * account (checked with ERC-1271), an owner's wallet as the key a contract account accepts.
 */
export async function signWithWallet(message: string, address: string): Promise<string> {
  const provider = window.ethereum;
  if (!provider) throw new Error('No browser wallet found: paste the account’s signature instead');
  await provider.request({ method: 'eth_requestAccounts' });
  return (await provider.request({ method: 'personal_sign', params: [toHex(message), address] })) as string;
}
