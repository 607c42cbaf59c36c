import { retryAfterSecondsOf } from './errors';

export interface RetryOptions {
  /** Retries after the first attempt, for 429 and 503 answers only (default 2; 0 turns retries off). */
  maxRetries?: number;
  /**
   * The longest wait before one retry (default 30 000 ms): an answer asking for longer is returned to
   * the caller instead, so a call never hangs for minutes.
   */
  maxDelayMs?: number;
  /** Told before each retry, e.g. to log it. */
  onRetry?: (retry: { attempt: number; status: number; delayMs: number; request: Request }) => void;
}

export interface RequestDefaults {
  /** Sent on every POST that has no `Idempotency-Key` yet (default: a random UUID per call). */
  idempotencyKey?: () => string;
}

const RETRIED_STATUSES = new Set([429, 503]);

/**
 * A `fetch` that (1) gives every POST an `Idempotency-Key`, the same on each of its retries, so a retry
 * after a lost answer cannot create a second session; (2) retries 429 and 503 answers after the
 * `Retry-After` they carry (or a short backoff without one), at most `maxRetries` times and never
 * waiting longer than `maxDelayMs`.
 */
export function retryingFetch(
  baseFetch: typeof fetch,
  { maxRetries = 2, maxDelayMs = 30_000, onRetry }: RetryOptions = {},
  { idempotencyKey = () => crypto.randomUUID() }: RequestDefaults = {},
): (request: Request) => Promise<Response> {
  return async (input: Request) => {
    let request = input;
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
      const headers = new Headers(request.headers);
      headers.set('idempotency-key', idempotencyKey());
      request = new Request(request, { headers });
    }
    for (let attempt = 0; ; attempt++) {
      // A body can be read once: each attempt sends a copy.
      const response = await baseFetch(request.clone());
      if (!RETRIED_STATUSES.has(response.status) || attempt >= maxRetries) return response;
      const retryAfterSec = retryAfterSecondsOf(response);
      const delayMs = retryAfterSec !== null ? retryAfterSec * 1000 : 250 * 2 ** attempt;
      if (delayMs > maxDelayMs) return response;
      await response.body?.cancel();
      onRetry?.({ attempt: attempt + 1, status: response.status, delayMs, request });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  };
}
