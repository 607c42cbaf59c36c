import type { Logger } from 'pino';
import type { CredentialsStore } from './credentials';
import { ToolFailure, apiKeyRequired, loginRequired, reAuthRequired } from './toolResults';

/**
 * The StablePay API as the tools call it: picks the credential a route needs (the stored session token
 * for JWT routes, the `sk_` key for API-key routes) and turns every refusal into a ToolFailure carrying
 * SPEC's prefix where one applies. Logs method, path and status only: never a credential or a body.
 */

export type ApiAuth = 'none' | 'jwt' | 'sk';

/** A 429 whose Retry-After is at most this is waited out and the call made once more; a longer one is reported. */
export const MAX_RETRY_AFTER_WAIT_SEC = 5;

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  auth: ApiAuth;
  query?: Record<string, string | number | undefined>;
  /** Extra request headers (e.g. Idempotency-Key); an undefined value is not sent. */
  headers?: Record<string, string | undefined>;
  body?: unknown;
}

export interface ApiResponse {
  status: number;
  /** Parsed JSON, or undefined for an empty answer (204). */
  body: unknown;
}

export interface ApiClient {
  call(request: ApiRequest): Promise<ApiResponse>;
}

export interface ApiClientParameters {
  apiUrl: string;
  credentials: CredentialsStore;
  /** STABLEPAY_API_KEY; a key create_api_key remembered takes precedence. */
  apiKeyFromEnvironment?: string;
  logger: Logger;
  now?: () => Date;
}

export function createApiClient({
  apiUrl,
  credentials,
  apiKeyFromEnvironment,
  logger,
  now = () => new Date(),
}: ApiClientParameters): ApiClient {
  async function authorization(auth: ApiAuth): Promise<string | undefined> {
    if (auth === 'none') return undefined;
    const stored = await credentials.read();
    if (auth === 'jwt') {
      if (!stored.session) throw loginRequired();
      if (Date.parse(stored.session.expiresAt) <= now().getTime()) {
        throw reAuthRequired(`the stored session token expired at ${stored.session.expiresAt}`);
      }
      return `Bearer ${stored.session.token}`;
    }
    const key = stored.apiKey?.rawKey ?? apiKeyFromEnvironment;
    if (!key) throw apiKeyRequired('webhook tools need an sk_ API key and none is configured');
    return `Bearer ${key}`;
  }

  return {
    async call({ method, path, auth, query, headers: extraHeaders, body }) {
      const url = new URL(path, apiUrl);
      for (const [name, value] of Object.entries(query ?? {})) {
        if (value !== undefined) url.searchParams.set(name, String(value));
      }
      const headers: Record<string, string> = { accept: 'application/json' };
      for (const [name, value] of Object.entries(extraHeaders ?? {})) {
        if (value !== undefined) headers[name] = value;
      }
      const credential = await authorization(auth);
      if (credential) headers.authorization = credential;
      if (body !== undefined) headers['content-type'] = 'application/json';

      const send = async (): Promise<Response> => {
        try {
          return await fetch(url, {
            method,
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(30_000),
          });
        } catch (error) {
          logger.warn({ method, path, err: (error as Error).message }, 'API unreachable');
          throw new ToolFailure(
            `the StablePay API at ${apiUrl} cannot be reached: ${(error as Error).message}`,
          );
        }
      };
      let response = await send();
      // A rate limit refuses before any work: waiting out a short Retry-After and asking once more is safe.
      const retryAfterSec = Number(response.headers.get('retry-after'));
      if (response.status === 429 && retryAfterSec > 0 && retryAfterSec <= MAX_RETRY_AFTER_WAIT_SEC) {
        logger.debug({ method, path, retryAfterSec }, 'rate limited; waiting once');
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, retryAfterSec * 1000));
        response = await send();
      }
      logger.debug({ method, path, status: response.status }, 'API call');
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      if (response.ok) return { status: response.status, body: parsed };
      throw refusal(response, parsed, auth);
    },
  };
}

/** The ToolFailure for a non-2xx answer. */
function refusal(response: Response, body: unknown, auth: ApiAuth): ToolFailure {
  const error = (typeof body === 'object' && body !== null ? body : {}) as {
    message?: unknown;
    error?: unknown;
    code?: unknown;
  };
  const message = typeof error.message === 'string' ? error.message : response.statusText;
  if (error.code === 'otp_invalid') return new ToolFailure(message, 'OTP_INVALID');
  if (error.code === 'otp_expired') return new ToolFailure(message, 'OTP_EXPIRED');
  if (response.status === 401 && auth === 'jwt') {
    return reAuthRequired(`the API refused the stored session token (${message})`);
  }
  if (response.status === 401 && auth === 'sk') {
    return apiKeyRequired(`the API refused the sk_ key, which is revoked or unknown (${message})`);
  }
  const retryAfter = response.headers.get('retry-after');
  return new ToolFailure(
    `HTTP ${response.status} ${typeof error.error === 'string' ? error.error : response.statusText}: ${message}` +
      (retryAfter ? ` (retry after ${retryAfter} s)` : ''),
  );
}
