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

/**
 * Per client IP (`ctx.ip`: the peer, or with TRUST_PROXY the address the first trusted proxy saw): the
 * first step of every route that declares a `perIpLimit` (api/routing/mountRoutes.ts), so the allowance
 * belongs to the route the router matched, whatever the path's spelling (security review III, finding 1).
 * Each figure holds for the whole service whatever the replica count. Past it: 429 with Retry-After,
 * before the route's own work.
 */
export function limitPerClientIp(rate: RequestRate): Middleware {
  return async (ctx, next) => {
    const retryAfterSec = await rate.take(ctx.ip);
    if (retryAfterSec !== undefined) throw tooManyRequests('requests from this client', retryAfterSec);
    return next();
  };
}
