import { randomUUID } from 'node:crypto';
import { type Address, type Hex } from 'viem';
import { SIGNER_METHOD, signerAnswerSchema, type SignPaymasterDataWireRequest } from '../../signer/protocol';
import { parseSignerEndpoint } from './signerEndpoint';
import { createSignerTransport } from './signerTransport';

/**
 * Client of the internal signing service (docs/architecture.md "Processes" `signer`; the wire protocol is signer/protocol.ts):
 * one JSON-RPC 2.0 method over HTTP at `<SIGNER_URL>/rpc` (TCP, or the service's Unix-domain socket for a
 * `unix:///path` SIGNER_URL) with `Authorization: Bearer <SIGNER_SHARED_SECRET>`.
 * The service's own denials (-32602 unsupported chain / token / params, -32000 deposit too low) come
 * back as `denied` for the RPC to return unchanged (SPEC rule 10); anything that is not a
 * well-formed answer is `upstream`; data in the wrong mode is `mode_mismatch`.
 */

/** What every paymaster method returns (ERC-7677). */
export interface PaymasterResult {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: Hex;
  paymasterPostOpGasLimit: Hex;
}

/**
 * What the API asks the service to sign: the protocol's request, with the user operation as received
 * (params[0], nonce and gas fields as 0x hex strings); the service validates it.
 */
export type SignPaymasterDataRequest = Omit<SignPaymasterDataWireRequest, 'userOp'> & {
  userOp: Record<string, unknown>;
};

export type SignerFailure =
  /** The service denied the request: returned to the caller unchanged. */
  | { kind: 'denied'; code: -32602 | -32000; message: string }
  /** Unreachable, timed out, non-2xx, non-JSON or not a JSON-RPC answer; `detail` is for the log, not the caller. */
  | { kind: 'upstream'; detail: string }
  /** Signed data for another mode than the one requested. */
  | { kind: 'mode_mismatch'; detail: string };

export type SignPaymasterDataOutcome =
  { ok: true; result: PaymasterResult } | { ok: false; failure: SignerFailure };

export interface SignerClient {
  signPaymasterData(request: SignPaymasterDataRequest): Promise<SignPaymasterDataOutcome>;
}

export const DEFAULT_SIGNER_TIMEOUT_MS = 5_000;

export function createSignerClient({
  url,
  sharedSecret,
  timeoutMs = DEFAULT_SIGNER_TIMEOUT_MS,
}: {
  url: string | undefined;
  sharedSecret: string | undefined;
  timeoutMs?: number;
}): SignerClient {
  const upstream = (detail: string): SignPaymasterDataOutcome => ({
    ok: false,
    failure: { kind: 'upstream', detail },
  });
  const transport =
    url && sharedSecret
      ? createSignerTransport({
          endpoint: parseSignerEndpoint(url),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${sharedSecret}` },
          timeoutMs,
        })
      : undefined;

  return {
    async signPaymasterData(request) {
      if (!transport)
        return upstream('the signing service is not configured (SIGNER_URL, SIGNER_SHARED_SECRET)');
      const { token, ...rest } = request;
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: randomUUID(),
        method: SIGNER_METHOD,
        params: [{ ...rest, ...(token && { token }) }],
      });

      const response = await transport.post(body);
      if (!response.ok)
        return upstream(response.timedOut ? response.message : `unreachable: ${response.message}`);
      if (response.status < 200 || response.status > 299) return upstream(`answered HTTP ${response.status}`);
      const { text } = response;

      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return upstream('answered a body that is not JSON');
      }
      const answer = signerAnswerSchema.safeParse(json);
      if (!answer.success)
        return upstream('answered something that is not a JSON-RPC response with a paymaster result');

      if ('error' in answer.data) {
        const { code, message } = answer.data.error;
        if (code === -32602 || code === -32000)
          return { ok: false, failure: { kind: 'denied', code, message } };
        return upstream(`answered JSON-RPC error ${code}: ${message}`);
      }
      const { mode, ...result } = answer.data.result;
      if (mode !== request.mode) {
        return {
          ok: false,
          failure: {
            kind: 'mode_mismatch',
            detail: `requested ${request.mode} paymaster data, the signer returned ${mode}`,
          },
        };
      }
      return { ok: true, result: result as PaymasterResult };
    },
  };
}
