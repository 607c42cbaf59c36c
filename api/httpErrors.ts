import { STATUS_CODES } from 'node:http';

/**
 * An error that becomes the framework-style body `{ statusCode, message, error }` (docs/service-contract.md "Errors").
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
    /** The request fields a 400 refuses, each with its problem (`message` names them too). */
    readonly errors: readonly FieldError[] = [],
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
      // Every 400 lists its fields (none when the problem is not one field's, e.g. malformed JSON).
      ...(this.statusCode === 400 && { errors: [...this.errors] }),
    };
  }
}

export interface HttpErrorBody {
  statusCode: number;
  message: string;
  error?: string;
  code?: string;
  errors?: FieldError[];
}

/** One refused request field: its dotted path (`""` for the request as a whole) and what is wrong with it. */
export interface FieldError {
  field: string;
  message: string;
}

export const badRequest = (message: string, errors: readonly FieldError[] = []) =>
  new HttpError(400, message, {}, undefined, errors);

/** The one place a validation 400 is worded: `Validation failed: field: problem; other: problem`, and the list. */
export function validationFailed(errors: readonly FieldError[]): HttpError {
  const described = errors.map(({ field, message }) => (field ? `${field}: ${message}` : message)).join('; ');
  return badRequest(`Validation failed: ${described}`, errors);
}

/** A single field's validation 400. */
export const invalidField = (field: string, message: string) => validationFailed([{ field, message }]);
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
