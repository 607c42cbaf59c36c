import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { retryingDevFetch } from './retryingDevFetch';

/** What POST /v1/auth/verify answers (the fields the dev tools read). */
export interface WalletLoginResult {
  token: string;
  expiresAt: string;
  merchant: { id: string; walletAddress: string; email: string | null; emailVerified: boolean };
}

/** A dev tool's call that the API refused: the route, its status and its message. */
export class DevApiError extends Error {
  constructor(
    readonly route: string,
    readonly status: number,
    body: string,
  ) {
    super(`${route} answered ${status}: ${body}`);
    this.name = 'DevApiError';
  }
}

/**
 * The headless wallet login of the contract (SPEC "Login flow"), as any integrator does it:
 * login-payload for the key's address, sign the SIWE message, verify. Returns a fresh merchant JWT.
 */
export async function signInWithWallet(apiUrl: string, privateKey: Hex): Promise<WalletLoginResult> {
  const account = privateKeyToAccount(privateKey);
  const payloadResponse = await retryingDevFetch(
    `${apiUrl}/v1/auth/login-payload?address=${account.address}`,
  );
  if (!payloadResponse.ok)
    throw new DevApiError('GET /v1/auth/login-payload', payloadResponse.status, await payloadResponse.text());
  const { message, ...payload } = (await payloadResponse.json()) as { message: string };
  const signature = await account.signMessage({ message });
  const verified = await retryingDevFetch(`${apiUrl}/v1/auth/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ payload, signature }),
  });
  if (!verified.ok) throw new DevApiError('POST /v1/auth/verify', verified.status, await verified.text());
  return (await verified.json()) as WalletLoginResult;
}
