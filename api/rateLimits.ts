import type { Middleware } from 'koa';
import { HttpError } from './httpErrors';

/** A request-rate limit: undefined when the request may go on, else the seconds until one may. */
export interface RequestRate {
  take(key: string): Promise<number | undefined>;
}

/**
 * A token bucket per key, in process: what a replica counts with on its own while the shared count of
 * the service-wide limits (api/requestRateLeases.ts) is out of reach.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    /** Requests allowed per minute, and the burst a quiet key may spend at once. */
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
    /** Keys remembered; the least recently used goes first (a flood of new keys cannot exhaust memory). */
    private readonly maxKeys = 100_000,
  ) {}

  /** Takes one request from `key`'s bucket: undefined when allowed, else the seconds until one is. */
  take(key: string): number | undefined {
    const now = this.now();
    const perMs = this.perMinute / 60_000;
    const stored = this.buckets.get(key);
    const tokens = stored
      ? Math.min(this.perMinute, stored.tokens + (now - stored.at) * perMs)
      : this.perMinute;
    this.buckets.delete(key);
    if (tokens < 1) {
      this.buckets.set(key, { tokens, at: now });
      return Math.max(1, Math.ceil((1 - tokens) / perMs / 1000));
    }
    this.buckets.set(key, { tokens: tokens - 1, at: now });
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    return undefined;
  }
}

/** 429 in the framework-style body, with Retry-After in seconds. */
export const tooManyRequests = (what: string, retryAfterSec: number) =>
  new HttpError(429, `Too many ${what}; retry after ${retryAfterSec} s`, {
    'retry-after': String(retryAfterSec),
  });

/** The unauthenticated routes, by the allowance they share. */
const UNAUTHENTICATED_ROUTES: { group: 'login' | 'publicSession'; method: string; path: RegExp }[] = [
  { group: 'login', method: 'GET', path: /^\/v1\/auth\/login-payload$/ },
  { group: 'login', method: 'POST', path: /^\/v1\/auth\/verify$/ },
  { group: 'login', method: 'POST', path: /^\/v1\/auth\/email\/(start|verify)$/ },
  { group: 'publicSession', method: 'GET', path: /^\/v1\/sessions\/[^/]+(\/status)?$/ },
  { group: 'publicSession', method: 'GET', path: /^\/pay\/[^/]+$/ },
  // The yield sites, on a custom domain's Host and as previews (security review II, finding 7).
  { group: 'publicSession', method: 'GET', path: /^\/$/ },
  { group: 'publicSession', method: 'HEAD', path: /^\/$/ },
  { group: 'publicSession', method: 'GET', path: /^\/sites\/[^/]+$/ },
  { group: 'publicSession', method: 'HEAD', path: /^\/sites\/[^/]+$/ },
];

/**
 * Whether a route (Koa path, e.g. `/v1/sessions/:id`) shares a per-IP allowance, so its contract lists
 * 429: its parameters stand in as one segment each, as a request's would.
 */
export function isLimitedPerClientIp(method: string, koaPath: string): boolean {
  const path = koaPath.replace(/:[A-Za-z0-9_]+/g, 'x');
  return UNAUTHENTICATED_ROUTES.some(
    (limited) => limited.method === method.toUpperCase() && limited.path.test(path),
  );
}

const LIMITED_PREFIXES = ['/v1/auth/', '/v1/sessions/', '/pay/', '/sites/'];

/**
 * Per client IP (`ctx.ip`: the peer, or with TRUST_PROXY the address the first trusted proxy saw):
 * login (RATE_LIMIT_LOGIN_PER_MINUTE) and the public reads: session read, status, checkout page and
 * the yield sites (RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE), each figure for the whole service whatever the
 * replica count. Past it: 429 with Retry-After, before any work.
 */
export function limitUnauthenticatedRoutes(rates: {
  login: RequestRate;
  publicSession: RequestRate;
}): Middleware {
  return async (ctx, next) => {
    const path = ctx.path;
    // Every limited path starts with one of these: the rest (health, sk_ and JWT routes) skip the patterns.
    if (path !== '/' && !LIMITED_PREFIXES.some((prefix) => path.startsWith(prefix))) return next();
    const method = ctx.method;
    const route = UNAUTHENTICATED_ROUTES.find(
      (limited) => limited.method === method && limited.path.test(path),
    );
    if (route) {
      const retryAfterSec = await rates[route.group].take(ctx.ip);
      if (retryAfterSec !== undefined) throw tooManyRequests('requests from this client', retryAfterSec);
    }
    return next();
  };
}
