/**
 * The dashboard's one way to the service: the public JWT routes, same origin (the CSP allows no other).
 * The session token lives in this tab's sessionStorage only: it survives a reload, not the tab. Only a
 * sign-in on a page puts one there; a URL never does (security review III, finding 3).
 */
import type { ApiErrorBody, FieldError } from '../../sdk/src/errors';

const TOKEN_KEY = 'stablepay.dashboard.token';

/** A 4xx/5xx answer: the API's own message, its reason code, and on a 400 the request fields it refuses. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly errors: readonly FieldError[] = [],
  ) {
    super(message);
  }

  /**
   * Each named top field's problems, read from the answer's `errors` list (nested paths under their top
   * field, as `path: problem`); a refused one-time code (otp_invalid, otp_expired) is the `code` field's.
   */
  get fieldErrors(): Record<string, string> {
    if (this.code?.startsWith('otp_')) return { code: this.message };
    const byField: Record<string, string> = {};
    for (const { field, message } of this.errors) {
      const top = field.split('.')[0];
      if (!top) continue;
      const part = `${field}: ${message}`;
      byField[top] = byField[top] ? `${byField[top]}; ${part}` : part;
    }
    return byField;
  }
}

type Listener = (token: string | null) => void;
const listeners = new Set<Listener>();

export function currentToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  for (const listener of listeners) listener(token);
}

export function onTokenChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Signs out a session token this tab does not hold (one a sign-in link gave and the person turned
 * down): it stops working everywhere. Best effort: it expires on its own anyway.
 */
export async function revokeToken(token: string): Promise<void> {
  await fetch('/v1/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${token}` } }).catch(
    () => undefined,
  );
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<T> {
  const headers: Record<string, string> = { ...extraHeaders, accept: 'application/json' };
  const token = currentToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The service did not answer: check the connection and try again');
  }
  const text = await response.text();
  const json = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const message =
      (json as { message?: string } | undefined)?.message ?? `The service answered ${response.status}`;
    // A token the service no longer takes (expired, revoked): back to sign-in. A login route's 401 is
    // about the credential it was given (a code, a signature), not about this tab's token.
    if (response.status === 401 && token && !path.startsWith('/v1/auth/')) setToken(null);
    const answer = json as ApiErrorBody | undefined;
    throw new ApiError(response.status, message, answer?.code, answer?.errors);
  }
  return json as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}, headers?: Record<string, string>) =>
  request<T>('POST', path, body, headers);
export const patch = <T>(path: string, body: unknown) => request<T>('PATCH', path, body);
export const del = <T>(path: string) => request<T>('DELETE', path);

/** A download link for a JWT route (CSV, PDF): fetched with the token, handed to the browser as a blob. */
export async function download(path: string, filename: string): Promise<void> {
  const response = await fetch(path, { headers: { authorization: `Bearer ${currentToken() ?? ''}` } });
  if (!response.ok) {
    const json = safeJson(await response.text()) as { message?: string } | undefined;
    throw new ApiError(response.status, json?.message ?? `The service answered ${response.status}`);
  }
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
