import type { Config } from '../config';
import type { Db } from '../db/client';
import { deleteFullRequestRateBuckets, leaseTokens } from '../db/requestRateBuckets';
import type { Logger } from '../logging/logger';
import { TokenBuckets, type RequestRate } from './rateLimits';

/** One lease: how many of the figure's tokens a replica takes from the shared bucket at once. */
export const LEASES_PER_FIGURE = 20;
/** Leased tokens not spent within this are dropped (a replica never sits on an old lease). */
const LEASE_TTL_MS = 10_000;
const SHARED_COUNT_RETRY_MS = 5_000;
const WARNING_INTERVAL_MS = 60_000;

/** What a replica holds of one key. */
interface LocalLease {
  /** Tokens leased to this replica and not yet spent, until `expiresAt`. */
  tokens: number;
  expiresAt: number;
  /** The shared bucket was empty: refuse locally until then (no database write per refused request). */
  refusedUntil: number;
  pending?: Promise<void>;
}

export interface LeasedRequestRateOptions {
  /** The limit's name, the first part of the shared key (`login`, `publicSession`, `paymasterClient`). */
  group: string;
  perMinute: number;
  /** Takes up to `lease` tokens from the shared bucket; resolves with how many and, when none, the wait. */
  lease(request: {
    limitKey: string;
    perMinute: number;
    lease: number;
  }): Promise<{ granted: number; retryAfterSec?: number }>;
  /** Forgets the shared buckets that are full again. */
  forgetFull(): Promise<void>;
  logger: Logger;
  now?: () => number;
  /** Keys remembered; the least recently used goes first (a flood of new keys cannot exhaust memory). */
  maxKeys?: number;
}

/**
 * A service-wide request rate (docs/decisions.md, "Service-wide rate limits"): one token bucket per key
 * in Postgres (capacity the figure, refilled at the figure a minute), shared by every api replica, which
 * takes ceil(figure / LEASES_PER_FIGURE) tokens at a time and spends them locally; only a lease costs a
 * database write, never each request. Every request let through spent a token the shared bucket granted,
 * so the service never lets through more than one bucket would; it may let through fewer, by what the
 * other replicas hold unspent while one is refused: at most (replicas - 1) × lease. When Postgres does not
 * answer, each replica counts on its own (the figure per replica) rather than refusing everyone.
 */
export class LeasedRequestRate implements RequestRate {
  private readonly leases = new Map<string, LocalLease>();
  private readonly leaseSize: number;
  private readonly fallback: TokenBuckets;
  private readonly now: () => number;
  private readonly maxKeys: number;
  private lastForgetAt = 0;
  private lastWarningAt = -Infinity;
  /** After a failed lease, the shared bucket is not asked again for a few seconds (no wait per request). */
  private sharedCountDownUntil = 0;

  constructor(private readonly options: LeasedRequestRateOptions) {
    this.now = options.now ?? Date.now;
    this.maxKeys = options.maxKeys ?? 100_000;
    this.leaseSize = Math.max(1, Math.ceil(options.perMinute / LEASES_PER_FIGURE));
    this.fallback = new TokenBuckets(options.perMinute, this.now, this.maxKeys);
  }

  async take(key: string): Promise<number | undefined> {
    const now = this.now();
    this.forgetFullBuckets(now);
    const lease = this.localLease(key, now);
    for (;;) {
      if (lease.tokens > 0) {
        lease.tokens -= 1;
        return undefined;
      }
      const current = this.now();
      if (current < lease.refusedUntil) return Math.max(1, Math.ceil((lease.refusedUntil - current) / 1000));
      if (current < this.sharedCountDownUntil) return this.fallback.take(key);
      lease.pending ??= this.refill(key, lease).finally(() => (lease.pending = undefined));
      try {
        await lease.pending;
      } catch (error) {
        this.sharedCountDownUntil = this.now() + SHARED_COUNT_RETRY_MS;
        this.warnOnce(error);
        return this.fallback.take(key);
      }
    }
  }

  private localLease(key: string, now: number): LocalLease {
    const lease = this.leases.get(key) ?? { tokens: 0, expiresAt: 0, refusedUntil: 0 };
    this.leases.delete(key);
    if (now >= lease.expiresAt) lease.tokens = 0;
    this.leases.set(key, lease);
    if (this.leases.size > this.maxKeys) this.leases.delete(this.leases.keys().next().value!);
    return lease;
  }

  private async refill(key: string, lease: LocalLease): Promise<void> {
    const { granted, retryAfterSec } = await this.options.lease({
      // The figure is part of the key: replicas configured alike share a bucket, a changed figure starts afresh.
      limitKey: `${this.options.group}:${this.options.perMinute}:${key}`,
      perMinute: this.options.perMinute,
      lease: this.leaseSize,
    });
    const now = this.now();
    if (granted > 0) {
      lease.tokens += granted;
      lease.expiresAt = now + LEASE_TTL_MS;
    } else lease.refusedUntil = now + (retryAfterSec ?? 1) * 1000;
  }

  /** Once a minute, the buckets that are full again go (whichever replica gets there first). */
  private forgetFullBuckets(now: number): void {
    if (now - this.lastForgetAt < 60_000) return;
    this.lastForgetAt = now;
    this.options.forgetFull().catch((error: unknown) => this.warnOnce(error));
  }

  private warnOnce(error: unknown): void {
    const now = this.now();
    if (now - this.lastWarningAt < WARNING_INTERVAL_MS) return;
    this.lastWarningAt = now;
    this.options.logger.warn(
      { group: this.options.group, errorName: (error as Error)?.name, message: (error as Error)?.message },
      'shared request rate unavailable: counting on this replica alone',
    );
  }
}

/** The service-wide request rates, each keyed as its name says. */
export interface RequestRates {
  /** Per client IP: login-payload, verify and the e-mail login routes. */
  login: RequestRate;
  /** Per client IP: session read and status, checkout page, yield sites. */
  publicSession: RequestRate;
  /** Per paymaster client id: RPC and bundler proxy. */
  paymasterClient: RequestRate;
  /** Per paymaster client id: dry runs (pm_validateSponsorshipPolicies, the dashboard's policy check). */
  paymasterDryRuns: RequestRate;
  /** Per merchant: redeem-request pages, each up to ten log windows read from a chain. */
  yieldRedeemRequests: RequestRate;
}

/**
 * The service-wide limits: login and public reads per client IP, paymaster requests per client id,
 * redeem-request pages per merchant.
 */
export function createRequestRates({
  config,
  db,
  logger,
  now,
}: {
  config: Pick<
    Config,
    | 'RATE_LIMIT_LOGIN_PER_MINUTE'
    | 'RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE'
    | 'PAYMASTER_RPC_PER_CLIENT_PER_MINUTE'
    | 'PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE'
    | 'YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE'
  >;
  db: Db;
  logger: Logger;
  now?: () => number;
}): RequestRates {
  const rate = (group: string, perMinute: number) =>
    new LeasedRequestRate({
      group,
      perMinute,
      lease: (request) => leaseTokens(db, request),
      forgetFull: () => deleteFullRequestRateBuckets(db),
      logger,
      now,
    });
  return {
    login: rate('login', config.RATE_LIMIT_LOGIN_PER_MINUTE),
    publicSession: rate('publicSession', config.RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE),
    paymasterClient: rate('paymasterClient', config.PAYMASTER_RPC_PER_CLIENT_PER_MINUTE),
    paymasterDryRuns: rate('paymasterDryRuns', config.PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE),
    yieldRedeemRequests: rate('yieldRedeemRequests', config.YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE),
  };
}
