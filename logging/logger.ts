import pino, { type DestinationStream, type Logger } from 'pino';
import { redactProviderUrlsDeep } from './providerUrlRedaction';

export type { Logger };

/**
 * JSON logs. Credentials are redacted by path so a handler that logs a request or a body by
 * mistake still cannot leak them; code must not log secrets in the first place.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-client-id"]',
  'headers.authorization',
  '*.rawKey',
  '*.secret',
  '*.privateKey',
  '*.token',
  '*.signature',
  'rawKey',
  'secret',
  'privateKey',
  'token',
];

let isoTimeMs = -1;
let isoTimeField = '';
/**
 * pino's `stdTimeFunctions.isoTime`, the same `,"time":"<ISO 8601>"` field, formatted once per millisecond:
 * a busy api writes several lines within one, and the formatting was the largest cost of an access line.
 */
export function cachedIsoTime(): string {
  const now = Date.now();
  if (now !== isoTimeMs) {
    isoTimeMs = now;
    isoTimeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return isoTimeField;
}

export function createLogger(
  options: { level: string; name?: string },
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      level: options.level,
      name: options.name,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // Errors logged as `err`/`error` (viem's quote the RPC URL, which may carry the provider's key).
      serializers: {
        err: (error: unknown) => redactProviderUrlsDeep(pino.stdSerializers.err(error as Error)),
        error: (error: unknown) =>
          redactProviderUrlsDeep(error instanceof Error ? pino.stdSerializers.err(error) : error),
      },
      timestamp: cachedIsoTime,
    },
    destination,
  );
}
