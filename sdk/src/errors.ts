/** The error body every route but the paymaster RPC answers with: `{statusCode, message, error?, code?, errors?}`. */
export interface ApiErrorBody {
  statusCode: number;
  message: string;
  error?: string;
  code?: string;
  /** On every 400: the refused request fields (dotted path, `''` for the request as a whole). */
  errors?: FieldError[];
}

/** One refused request field and its problem. */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * A non-2xx answer, typed: `status` and the server's `message` (and `code` where the route gives one,
 * e.g. `otp_invalid`; `errors`, the refused fields, on a 400). `retryAfterSec` is set on 429 and 503 answers that were not retried (or ran out
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

  /** The refused request fields of a 400 (`body.errors`); empty for any other answer. */
  get errors(): FieldError[] {
    const errors = (this.body as { errors?: unknown } | undefined)?.errors;
    return Array.isArray(errors) ? errors.filter(isFieldError) : [];
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

function isFieldError(value: unknown): value is FieldError {
  const entry = value as Partial<FieldError> | null;
  return typeof entry?.field === 'string' && typeof entry.message === 'string';
}

/** `Retry-After` as seconds (a number of seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterSecondsOf(response: Response, now = Date.now()): number | null {
  const value = response.headers.get('retry-after');
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * A JSON-RPC error of the paymaster RPC (HTTP 200 with `error`): `code` is the JSON-RPC code, and a
 * `message` starting `Policy denied: ` is a policy decision, not a fault of the request.
 */
export class PaymasterRpcError extends Error {
  override name = 'PaymasterRpcError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
