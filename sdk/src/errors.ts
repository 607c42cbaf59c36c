/** The error body every route but the paymaster RPC answers with: `{statusCode, message, error?, code?}`. */
export interface ApiErrorBody {
  statusCode: number;
  message: string;
  error?: string;
  code?: string;
}

/**
 * A non-2xx answer, typed: `status` and the server's `message` (and `code` where the route gives one,
 * e.g. `otp_invalid`). `retryAfterSec` is set on 429 and 503 answers that were not retried (or ran out
 * of retries).
 */
export class StablePayError extends Error {
  override name = 'StablePayError';
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
    readonly retryAfterSec?: number,
  ) {
    super(message);
  }

  /** The server's reason code (`body.code`), when the answer carries one. */
  get code(): string | undefined {
    const code = (this.body as { code?: unknown } | undefined)?.code;
    return typeof code === 'string' ? code : undefined;
  }

  static from(response: Response, body: unknown): StablePayError {
    const message =
      typeof (body as ApiErrorBody | undefined)?.message === 'string'
        ? (body as ApiErrorBody).message
        : `HTTP ${response.status}`;
    return new StablePayError(response.status, message, body, retryAfterSecondsOf(response) ?? undefined);
  }
}

/** `Retry-After` as seconds (a number of seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterSecondsOf(response: Response, now = Date.now()): number | null {
  const value = response.headers.get('retry-after');
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
