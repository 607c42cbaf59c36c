/**
 * The bundler proxy's upstream leg: POSTs the caller's JSON-RPC bytes to the bundler provider
 * (BUNDLER_URL_<chainId>, whose path or query may carry an API key) and hands back its body
 * byte for byte when it is a 2xx JSON answer. Every failure is described in words that cannot
 * contain the provider URL's credential: fetch errors often quote the URL, so they are redacted.
 */

export const DEFAULT_BUNDLER_TIMEOUT_MS = 30_000;
/** Bundler answers are small (receipts, gas estimates); a larger one is treated as a failure. */
const RESPONSE_LIMIT_BYTES = 4 * 1024 * 1024;

export type RelayOutcome =
  | { ok: true; body: Buffer }
  /** `message` is safe to show the caller and to log. */
  | { ok: false; message: string };

export async function relayToBundler(
  upstreamUrl: string,
  body: Buffer,
  { timeoutMs = DEFAULT_BUNDLER_TIMEOUT_MS }: { timeoutMs?: number } = {},
): Promise<RelayOutcome> {
  const redact = credentialRedactor(upstreamUrl);
  let response: Response;
  let answer: Buffer;
  try {
    response = await fetch(upstreamUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: new Uint8Array(body),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    answer = await readLimited(response);
  } catch (error) {
    if (errorField(error, 'name') === 'TimeoutError') {
      return { ok: false, message: `bundler upstream did not answer within ${timeoutMs} ms` };
    }
    return { ok: false, message: redact(`bundler upstream unreachable: ${transportErrorText(error)}`) };
  }
  if (response.status < 200 || response.status > 299) {
    return { ok: false, message: `bundler upstream answered HTTP ${response.status}` };
  }
  try {
    JSON.parse(answer.toString('utf8'));
  } catch {
    return { ok: false, message: 'bundler upstream answered a body that is not JSON' };
  }
  return { ok: true, body: answer };
}

class ResponseTooLargeError extends Error {
  override name = 'ResponseTooLargeError';
  constructor() {
    super(`response larger than ${RESPONSE_LIMIT_BYTES} bytes`);
  }
}

async function readLimited(response: Response): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > RESPONSE_LIMIT_BYTES) throw new ResponseTooLargeError();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** "fetch failed: connect ECONNREFUSED 127.0.0.1:4337": the error and its causes, outermost first. */
export function transportErrorText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const message = errorField(current, 'message');
    if (message && !parts.includes(message)) parts.push(message);
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(': ') || 'unknown transport error';
}

/** A string field of an error-like value (errors from fetch may come from another realm, so no instanceof). */
function errorField(error: unknown, field: 'name' | 'message'): string | undefined {
  const value =
    typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[field] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Replaces everything in `text` that could be the upstream URL's credential with `[redacted]`:
 * the URL itself, its userinfo, path and query, every query value and every path segment or host
 * label long enough to be a key.
 */
export function credentialRedactor(upstreamUrl: string): (text: string) => string {
  let url: URL;
  try {
    url = new URL(upstreamUrl);
  } catch {
    return (text) => text.split(upstreamUrl).join('[redacted]');
  }
  const secrets = new Set<string>([upstreamUrl, url.href]);
  const add = (value: string, minimumLength: number) => {
    if (value.length < minimumLength) return;
    secrets.add(value);
    try {
      const decoded = decodeURIComponent(value);
      if (decoded.length >= minimumLength) secrets.add(decoded);
    } catch {
      // not percent-encoded
    }
  };
  add(url.username, 1);
  add(url.password, 1);
  if (url.pathname !== '/') add(`${url.pathname}${url.search}`, 2);
  add(url.search, 2);
  // Raw pairs, so both the encoded and (through add) the decoded form of each value are covered.
  for (const pair of url.search.slice(1).split('&')) {
    add(pair, 4);
    add(pair.slice(pair.indexOf('=') + 1), 4);
  }
  for (const segment of url.pathname.split('/')) add(segment, 8);
  for (const label of url.hostname.split('.')) add(label, 16);
  // Longest first, so a fragment never survives inside a partly replaced longer match.
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => ordered.reduce((redacted, secret) => redacted.split(secret).join('[redacted]'), text);
}
