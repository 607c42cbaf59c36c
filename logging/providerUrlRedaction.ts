/**
 * RPC and bundler provider URLs often carry the provider's API key (in the path, the query or a
 * subdomain), and viem puts the URL into its error messages (`URL: https://…`, `details`, `url`). Every
 * error text that can reach a session's failureReason, an HTTP response or a log passes through here:
 * the worker's activity interceptor (workers/redactingActivityInterceptor.ts), the log serializer
 * (api/logger.ts) and the settlement's revert reasons. Every URL in such a text is replaced, whatever
 * its provider: one we were not configured with (a deployments file's rpcUrl) is hidden too.
 */
export const REDACTED_URL = '[redacted url]';

const URL_IN_TEXT = /\b(?:https?|wss?):\/\/[^\s"'`<>]+/gi;
const HAS_URL = /\b(?:https?|wss?):\/\//i;

/** `text` with every http(s) and ws(s) URL replaced by `[redacted url]`. */
export function redactProviderUrls(text: string): string {
  return text.replace(URL_IN_TEXT, REDACTED_URL);
}

/** The string fields of an error (viem's BaseError and its causes) that can hold a URL. */
const TEXT_FIELDS = ['message', 'shortMessage', 'details', 'stack', 'url', 'body', 'docsPath'] as const;

/**
 * Rewrites `error` and its cause chain in place so no field holds a URL (message, stack, viem's
 * shortMessage, details, url and metaMessages), and returns it: its class, code and other fields stay,
 * so callers still branch on them.
 */
export function withRedactedProviderUrls<T>(error: T): T {
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && typeof current === 'object' && !seen.has(current);) {
    seen.add(current);
    const fields = current as Record<string, unknown>;
    for (const field of TEXT_FIELDS) {
      const value = fields[field];
      if (typeof value !== 'string' || !HAS_URL.test(value)) continue;
      try {
        fields[field] = redactProviderUrls(value);
      } catch {
        // a read-only field (a getter): nothing to rewrite
      }
    }
    if (Array.isArray(fields.metaMessages)) {
      fields.metaMessages = fields.metaMessages.map((line) =>
        typeof line === 'string' ? redactProviderUrls(line) : line,
      );
    }
    current = fields.cause;
  }
  return error;
}

/** A serialized value (a log line's error object) with every URL in every string replaced. */
export function redactProviderUrlsDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return HAS_URL.test(value) ? redactProviderUrls(value) : value;
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactProviderUrlsDeep(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, redactProviderUrlsDeep(item, depth + 1)]),
  );
}
