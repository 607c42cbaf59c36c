import { StablePayError } from './errors';
import type { paths } from './generated/openapi';

/** The JSON request body of an operation. */
export type Body<
  Path extends keyof paths,
  Method extends 'post' | 'patch' | 'put',
> = paths[Path][Method] extends {
  requestBody?: { content: { 'application/json': infer Json } };
}
  ? Json
  : never;

/** What openapi-fetch answers: data on 2xx, the error body otherwise. */
export interface FetchResult<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

/** The answer's data, or a StablePayError carrying the status and the server's message. */
export async function unwrap<Data>(call: Promise<FetchResult<Data>>): Promise<Data> {
  const { data, error, response } = await call;
  if (!response.ok) throw StablePayError.from(response, error);
  return data as Data;
}

/** An explicit Idempotency-Key for one call (default: a fresh UUID per call, reused by its retries). */
export const idempotency = (key?: string) => (key ? { 'idempotency-key': key } : undefined);

/** Per-call options of a POST that creates something. */
export interface CreateOptions {
  /** Sent as `Idempotency-Key`: a repeat with the same key and body answers the first answer again. */
  idempotencyKey?: string;
}
