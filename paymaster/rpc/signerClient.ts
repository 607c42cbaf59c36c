import { randomUUID } from 'node:crypto';
import { type Address, type Hex } from 'viem';
import { type GroupCommitStats, groupCommitter } from '../../db/groupCommit';
import {
  SIGNER_BODY_LIMIT_BYTES,
  SIGNER_MAX_BATCH_REQUESTS,
  SIGNER_METHOD,
  signerAnswerSchema,
  type SignPaymasterDataWireRequest,
} from '../../signer/protocol';
import { parseSignerEndpoint } from './signerEndpoint';
import { createSignerTransport, type SignerPostOutcome, type SignerTransport } from './signerTransport';

/**
 * Client of the internal signing service (docs/architecture.md "Processes" `signer`; the wire protocol is signer/protocol.ts):
 * one JSON-RPC 2.0 method over HTTP at `<SIGNER_URL>/rpc` (TCP, or the service's Unix-domain socket for a
 * `unix:///path` SIGNER_URL) with `Authorization: Bearer <SIGNER_SHARED_SECRET>`. Concurrent requests
 * share exchanges: those that arrive while one is in flight go next as one JSON-RPC batch.
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

/**
 * Exchanges with the signing service in flight at once; the requests that arrive meanwhile wait and go
 * as the next batch. Why one: docs/decisions.md "Batched signing requests (issue 46, step 2, 2026-11-29)".
 */
export const SIGNER_EXCHANGES_IN_FLIGHT = 1;

/** A client that groups concurrent requests into batches, and counts them (tests and benches). */
export interface BatchingSignerClient extends SignerClient {
  stats(): GroupCommitStats;
}

/** One signing request on its way: its JSON-RPC id and body, sent alone or as an element of a batch. */
interface PendingSigning {
  request: SignPaymasterDataRequest;
  id: string;
  body: string;
  bytes: number;
}

const upstream = (detail: string): SignPaymasterDataOutcome => ({
  ok: false,
  failure: { kind: 'upstream', detail },
});

export function createSignerClient({
  url,
  sharedSecret,
  timeoutMs = DEFAULT_SIGNER_TIMEOUT_MS,
  exchangesInFlight = SIGNER_EXCHANGES_IN_FLIGHT,
}: {
  url: string | undefined;
  sharedSecret: string | undefined;
  timeoutMs?: number;
  exchangesInFlight?: number;
}): BatchingSignerClient {
  const transport =
    url && sharedSecret
      ? createSignerTransport({
          endpoint: parseSignerEndpoint(url),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${sharedSecret}` },
          timeoutMs,
        })
      : undefined;
  // While an exchange is in flight, requests wait; then they go together as one JSON-RPC batch, within
  // the service's bounds (the commas and brackets counted). A request alone goes as a single request.
  const batcher =
    transport &&
    groupCommitter<PendingSigning, SignPaymasterDataOutcome>({
      maxBatch: SIGNER_MAX_BATCH_REQUESTS,
      bytesOf: (pending) => pending.bytes + 1,
      maxBatchBytes: SIGNER_BODY_LIMIT_BYTES - 1,
      maxInFlight: exchangesInFlight,
      runOne: (pending) => signOne(transport, pending),
      runBatch: (batch) => signBatch(transport, batch),
    });

  return {
    async signPaymasterData(request) {
      if (!batcher)
        return upstream('the signing service is not configured (SIGNER_URL, SIGNER_SHARED_SECRET)');
      const { token, ...rest } = request;
      const id = randomUUID();
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: SIGNER_METHOD,
        params: [{ ...rest, ...(token && { token }) }],
      });
      return batcher.submit({ request, id, body, bytes: Buffer.byteLength(body) });
    },
    stats: () => batcher?.stats() ?? { batches: 0, batchedItems: 0, retried: 0, split: 0 },
  };
}

/** The JSON the service answered, or why the exchange gave none (unreachable, timed out, non-2xx, not JSON). */
function answeredJson(
  response: SignerPostOutcome,
): { ok: true; json: unknown } | { ok: false; detail: string } {
  if (!response.ok)
    return { ok: false, detail: response.timedOut ? response.message : `unreachable: ${response.message}` };
  if (response.status < 200 || response.status > 299)
    return { ok: false, detail: `answered HTTP ${response.status}` };
  try {
    return { ok: true, json: JSON.parse(response.text) };
  } catch {
    return { ok: false, detail: 'answered a body that is not JSON' };
  }
}

async function signOne(
  transport: SignerTransport,
  pending: PendingSigning,
): Promise<SignPaymasterDataOutcome> {
  const answered = answeredJson(await transport.post(pending.body));
  return answered.ok ? outcomeOf(answered.json, pending.request) : upstream(answered.detail);
}

/**
 * One POST for the whole batch; each caller gets the response that carries its own id. An exchange that
 * fails, or an answer that is not one response per request with exactly the batch's ids, fails every
 * caller of the batch as `upstream`: no caller can be given another's answer.
 */
async function signBatch(
  transport: SignerTransport,
  batch: readonly PendingSigning[],
): Promise<SignPaymasterDataOutcome[]> {
  const everyone = (detail: string) => batch.map(() => upstream(detail));
  const answered = answeredJson(await transport.post(`[${batch.map((pending) => pending.body).join(',')}]`));
  if (!answered.ok) return everyone(answered.detail);
  const answers = answered.json;
  if (!Array.isArray(answers) || answers.length !== batch.length)
    return everyone(
      `answered a batch of ${batch.length} with something other than ${batch.length} responses`,
    );
  const byId = new Map<unknown, unknown>();
  for (const answer of answers) byId.set((answer as { id?: unknown } | null)?.id, answer);
  if (!batch.every((pending) => byId.has(pending.id)))
    return everyone("answered a batch whose responses do not carry the requests' ids");
  return batch.map((pending) => outcomeOf(byId.get(pending.id), pending.request));
}

/** One JSON-RPC response read for its request: signed fields, a denial to relay, or an upstream failure. */
function outcomeOf(json: unknown, request: SignPaymasterDataRequest): SignPaymasterDataOutcome {
  const answer = signerAnswerSchema.safeParse(json);
  if (!answer.success)
    return upstream('answered something that is not a JSON-RPC response with a paymaster result');

  if ('error' in answer.data) {
    const { code, message } = answer.data.error;
    if (code === -32602 || code === -32000) return { ok: false, failure: { kind: 'denied', code, message } };
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
}
