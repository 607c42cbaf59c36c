import type { Hex } from 'viem';
import type { TestApp, TestResponse } from '../harness/app';
import type { SignedInMerchant } from '../harness/merchants';

/** Management and RPC calls the paymaster tests make, each failing loudly when setup does not succeed. */

export interface CreatedClient {
  id: string;
  clientId: string;
}

export async function createPaymasterClient(
  app: Pick<TestApp, 'request'>,
  merchant: SignedInMerchant,
  body: Record<string, unknown> = {},
): Promise<CreatedClient> {
  const response = await app.request('/v1/paymaster/clients', {
    method: 'POST',
    headers: merchant.auth,
    json: { label: 'test client', allowedChainIds: [84532], ...body },
  });
  if (response.status !== 201) throw new Error(`client create answered ${response.status}: ${response.text}`);
  return response.body.client;
}

export async function allowContract(
  app: Pick<TestApp, 'request'>,
  merchant: SignedInMerchant,
  chainId: number,
  contractAddress: string,
): Promise<void> {
  const response = await app.request('/v1/paymaster/allowlist', {
    method: 'POST',
    headers: merchant.auth,
    json: { chainId, contractAddress },
  });
  if (response.status !== 200)
    throw new Error(`allowlist upsert answered ${response.status}: ${response.text}`);
}

export async function addDenyRule(
  app: TestApp,
  merchant: SignedInMerchant,
  rule: { chainId: number; kind: 'sender' | 'target'; address: string },
): Promise<void> {
  const response = await app.request('/v1/paymaster/deny-rules', {
    method: 'POST',
    headers: merchant.auth,
    json: rule,
  });
  if (response.status !== 200)
    throw new Error(`deny rule upsert answered ${response.status}: ${response.text}`);
}

/**
 * The body SPEC's rate-limit denial has when a client's request rate (PAYMASTER_RPC_PER_CLIENT_PER_MINUTE)
 * refuses an RPC call: HTTP 200, JSON-RPC -32600, the wait in the message.
 */
export const clientRateDenial = (id: number | string) => ({
  jsonrpc: '2.0',
  id,
  error: {
    code: -32600,
    message: expect.stringMatching(
      /^Policy denied: paymaster_rate_limit_exceeded \(client request rate; retry after \d+ s\)$/,
    ),
  },
});

/** POST /v1/paymaster/rpc with a client id; `body` is sent as JSON unless it is a string (sent raw). */
export function paymasterRpc(
  app: Pick<TestApp, 'request'>,
  clientId: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const allHeaders = { ...(clientId !== undefined && { 'x-client-id': clientId }), ...headers };
  return typeof body === 'string'
    ? app.request('/v1/paymaster/rpc', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...allHeaders },
        body,
      })
    : app.request('/v1/paymaster/rpc', { method: 'POST', headers: allHeaders, json: body });
}

/** The result of a paymaster RPC call by the client, failing loudly on a JSON-RPC error or another status. */
export async function paymasterRpcResult<T = Record<string, Hex>>(
  app: TestApp,
  clientId: string,
  method: string,
  params: unknown[],
): Promise<T> {
  const response = await paymasterRpc(app, clientId, { jsonrpc: '2.0', id: 1, method, params });
  if (response.status !== 200 || response.body.error)
    throw new Error(`${method} answered ${response.status}: ${response.text}`);
  return response.body.result;
}

/** POST /v1/paymaster/bundler/{chainId} by the client: the JSON-RPC result, failing loudly on anything else. */
export async function bundlerProxyResult<T>(
  app: TestApp,
  clientId: string,
  chainId: number,
  method: string,
  params: unknown[],
): Promise<T> {
  const response = await app.request(`/v1/paymaster/bundler/${chainId}`, {
    method: 'POST',
    headers: { 'x-client-id': clientId },
    json: { jsonrpc: '2.0', id: 1, method, params },
  });
  if (response.status !== 200 || response.body.error) {
    throw new Error(`${method} through the bundler proxy answered ${response.status}: ${response.text}`);
  }
  return response.body.result as T;
}

/** The merchant's usage rows, newest first (one page of up to 100). */
export async function usageRows(
  app: TestApp,
  merchant: SignedInMerchant,
  query = '',
): Promise<Record<string, unknown>[]> {
  const response = await app.request(`/v1/paymaster/usage?limit=100${query}`, { headers: merchant.auth });
  if (response.status !== 200) throw new Error(`usage answered ${response.status}: ${response.text}`);
  return response.body.data;
}
