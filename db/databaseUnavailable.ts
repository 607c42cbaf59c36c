/**
 * Whether a failure means the database could not serve in time — no connection within the acquire
 * timeout, a statement past its deadline, the server shutting down or unreachable — as opposed to a bug
 * or bad data. The api answers these 503 with Retry-After: the request was not applied, retrying is safe.
 */
const UNAVAILABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /query read timeout/i,
  /Connection terminated due to connection timeout/i,
];

/** SQLSTATE classes and codes: 08 connection exception, 57014 query canceled (statement_timeout), 57P0x shutdown. */
const UNAVAILABLE_CODES = /^(08...|57014|57P0[1-3]|53300)$/;
const UNAVAILABLE_SYSTEM_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.test(code) || UNAVAILABLE_SYSTEM_CODES.has(code)))
    return true;
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(error.message));
}
