import { STATUS_CODES } from 'node:http';

/**
 * An error that becomes the framework-style body `{ statusCode, message, error }` (DESIGN §5).
 * Route code throws these; anything else reaching the error middleware is a 500.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** A machine-readable reason added to the body (e.g. `otp_invalid`), for clients that branch on it. */
    readonly code?: string,
  ) {
    super(message);
  }

  /** The reason phrase for the status, e.g. "Bad Request". */
  get error(): string {
    return STATUS_CODES[this.statusCode] ?? 'Error';
  }

  toBody(): HttpErrorBody {
    return {
      statusCode: this.statusCode,
      message: this.message,
      error: this.error,
      ...(this.code !== undefined && { code: this.code }),
    };
  }
}

export interface HttpErrorBody {
  statusCode: number;
  message: string;
  error?: string;
  code?: string;
}

export const badRequest = (message: string) => new HttpError(400, message);
export const unauthorized = (message = 'Unauthorized') => new HttpError(401, message);
export const forbidden = (message = 'Forbidden') => new HttpError(403, message);
export const notFound = (message = 'Not Found') => new HttpError(404, message);
/** A path that exists answering a method it does not serve; `allow` lists the ones it does. */
export const methodNotAllowed = (method: string, path: string, allow: string) =>
  new HttpError(405, `Method ${method} is not allowed on ${path}`, { allow });
export const conflict = (message: string) => new HttpError(409, message);
export const payloadTooLarge = (limitBytes: number) =>
  new HttpError(413, `Request body larger than ${limitBytes} bytes`);
/** A dependency did not answer in time; nothing was applied, so the client may retry after `retryAfterSec`. */
export const serviceUnavailable = (message: string, retryAfterSec = 2) =>
  new HttpError(503, message, { 'retry-after': String(retryAfterSec) });
