/**
 * JSON-RPC 2.0 framing for the paymaster RPC: reading the request envelope and writing responses.
 * Errors travel with HTTP 200; `id` is null only when the request could not be read (parse error).
 */
export type JsonRpcId = string | number;

export const JSON_RPC_ERRORS = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

export interface JsonRpcErrorObject {
  code: number;
  message: string;
}

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: unknown }
  | { jsonrpc: '2.0'; id: JsonRpcId | null; error: JsonRpcErrorObject };

export interface JsonRpcRequestEnvelope {
  id: JsonRpcId;
  method: string;
  params: unknown[];
}

export type ParseEnvelopeOutcome =
  { ok: true; request: JsonRpcRequestEnvelope } | { ok: false; detail: string };

/**
 * A JSON-RPC 2.0 request: `jsonrpc` exactly '2.0', `id` a string or number (notifications and
 * batches are not served), `method` a string, `params` an array. `body` is undefined when the bytes were not JSON.
 */
export function parseJsonRpcEnvelope(body: unknown): ParseEnvelopeOutcome {
  if (body === undefined) return { ok: false, detail: 'the body is not JSON' };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, detail: 'the body must be one JSON-RPC request object (batches are not supported)' };
  }
  const { jsonrpc, id, method, params } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0') return { ok: false, detail: "jsonrpc must be '2.0'" };
  if (typeof id !== 'string' && typeof id !== 'number')
    return { ok: false, detail: 'id must be a string or a number' };
  if (typeof method !== 'string') return { ok: false, detail: 'method must be a string' };
  if (!Array.isArray(params)) return { ok: false, detail: 'params must be an array' };
  return { ok: true, request: { id, method, params } };
}

export function jsonRpcResult(id: JsonRpcId, result: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result };
}

export function jsonRpcError(id: JsonRpcId | null, error: JsonRpcErrorObject): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message } };
}
