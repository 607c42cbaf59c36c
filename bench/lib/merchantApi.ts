import { getAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

/** A merchant signed up through the API the way the dashboard does it (SIWE login, then a secret key). */
export interface BenchMerchant {
  payoutAddress: Address;
  /** `Authorization` value for integrator routes (`sk_…`). */
  secretKeyAuthorization: string;
  /** `Authorization` value for dashboard routes (the merchant's session JWT). */
  dashboardAuthorization: string;
}

export interface PaymentOption {
  chainId: number;
  symbol: string;
  tokenAddress: Address;
  depositAddress: Address;
  /** Base units of the token. */
  amount: string;
  decimals: number;
}

export interface PublicSession {
  id: string;
  status: string;
  paymentOptions: PaymentOption[];
}

async function callApi(
  baseUrl: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown } = {},
) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...init.headers, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A fresh wallet signs in (login-payload → sign → verify) and creates a secret API key. */
export async function signUpBenchMerchant(baseUrl: string): Promise<BenchMerchant> {
  const account = privateKeyToAccount(generatePrivateKey());
  const { message, ...payload } = (await callApi(
    baseUrl,
    `/v1/auth/login-payload?address=${account.address}`,
  )) as { message: string };
  const signature = await account.signMessage({ message });
  const { token } = (await callApi(baseUrl, '/v1/auth/verify', {
    method: 'POST',
    json: { payload, signature },
  })) as { token: string };
  const { rawKey } = (await callApi(baseUrl, '/v1/merchants/me/api-keys', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    json: { label: 'bench' },
  })) as { rawKey: string };
  return {
    payoutAddress: getAddress(account.address),
    secretKeyAuthorization: `Bearer ${rawKey}`,
    dashboardAuthorization: `Bearer ${token}`,
  };
}

/** Creates a sandbox session (POST /v1/sessions) and reads it back with its payment options. */
export async function createSandboxSession(
  baseUrl: string,
  merchant: BenchMerchant,
  { amount, symbols, expiresInSec }: { amount: string; symbols?: string[]; expiresInSec?: number },
): Promise<PublicSession> {
  const created = (await callApi(baseUrl, '/v1/sessions', {
    method: 'POST',
    headers: { authorization: merchant.secretKeyAuthorization },
    json: {
      amount,
      sandboxMode: true,
      ...(symbols ? { paymentOptionSymbols: symbols } : {}),
      ...(expiresInSec !== undefined ? { expiresInSec } : {}),
    },
  })) as { id: string };
  return (await callApi(baseUrl, `/v1/sessions/${created.id}`)) as unknown as PublicSession;
}

/** The status view the checkout page polls (GET /v1/sessions/:id/status). */
export async function readSessionStatus(baseUrl: string, sessionId: string): Promise<string> {
  const view = (await callApi(baseUrl, `/v1/sessions/${sessionId}/status`)) as { status: string };
  return view.status;
}

export function paymentOptionOf(session: PublicSession, chainId: number, symbol: string): PaymentOption {
  const option = session.paymentOptions.find((entry) => entry.chainId === chainId && entry.symbol === symbol);
  if (!option) throw new Error(`session ${session.id} has no ${symbol} option on chain ${chainId}`);
  return option;
}
