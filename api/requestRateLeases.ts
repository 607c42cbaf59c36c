import type { Config } from '../config';
import type { Db } from '../db/client';
import { deleteRequestRateWindowsBefore, leaseRequests } from '../db/requestRateWindows';
import type { Logger } from '../logging/logger';
import { TokenBuckets, type RequestRate } from './rateLimits';

/** One lease: how many of the minute's requests a replica takes from the shared count at once. */
export const LEASES_PER_WINDOW = 20;
const WINDOW_MS = 60_000;

/** What a replica knows of one key in the current minute. */
interface LocalWindow {
  windowMinute: number;
  /** Requests leased to this replica and not yet spent. */
  tokens: number;
  /** The shared count said no more this minute. */
  exhausted: boolean;
  pending?: Promise<void>;
}

export interface LeasedRequestRateOptions {
  /** The limit's name, the first part of the shared key (`login`, `publicSession`, `paymasterClient`). */
  group: string;
  perMinute: number;
  /** Takes up to `lease` of the minute's requests from the shared count; resolves with how many it got. */
  lease(request: { limitKey: string; windowMinute: number; limit: number; lease: number }): Promise<number>;
  /** Forgets the shared counts of the minutes before the one given. */
  forgetBefore(windowMinute: number): Promise<void>;
  logger: Logger;
  now?: () => number;
  /** Keys remembered; the least recently used goes first (a flood of new keys cannot exhaust memory). */
  maxKeys?: number;
}

/**
 * A service-wide request rate (docs/decisions.md, "Service-wide rate limits"): every api replica takes
 * the requests of a key's current minute from one shared count in Postgres, a lease of
 * ceil(figure / LEASES_PER_WINDOW) at a time, and spends them locally; only a spent lease costs a
 * database write, never each request. The shared count never grants more than the figure per key and
 * minute, so the service lets through at most the figure, and at least the figure minus what the other
 * replicas hold unspent: (replicas - 1) × lease. When Postgres does not answer, each replica falls back to
 * counting on its own (the figure per replica) rather than refusing everyone.
 */
export class LeasedRequestRate implements RequestRate {
  private readonly windows = new Map<string, LocalWindow>();
  private readonly leaseSize: number;
  private readonly fallback: TokenBuckets;
  private readonly now: () => number;
  private readonly maxKeys: number;
  private forgottenBefore = 0;
  private lastWarningAt = 0;

  constructor(private readonly options: LeasedRequestRateOptions) {
    this.now = options.now ?? Date.now;
    this.maxKeys = options.maxKeys ?? 100_000;
    this.leaseSize = Math.max(1, Math.ceil(options.perMinute / LEASES_PER_WINDOW));
    this.fallback = new TokenBuckets(options.perMinute, this.now, this.maxKeys);
  }

  async take(key: string): Promise<number | undefined> {
    const now = this.now();
    const windowMinute = Math.floor(now / WINDOW_MS);
    this.forgetOldWindows(windowMinute);
    const window = this.localWindow(key, windowMinute);
    for (;;) {
      if (window.tokens > 0) {
        window.tokens -= 1;
        return undefined;
      }
      if (window.exhausted) return Math.max(1, Math.ceil(((windowMinute + 1) * WINDOW_MS - now) / 1000));
      window.pending ??= this.refill(key, window).finally(() => (window.pending = undefined));
      try {
        await window.pending;
      } catch (error) {
        this.warnOnce(error);
        return this.fallback.take(key);
      }
    }
  }

  private localWindow(key: string, windowMinute: number): LocalWindow {
    let window = this.windows.get(key);
    this.windows.delete(key);
    if (!window || window.windowMinute !== windowMinute)
      window = { windowMinute, tokens: 0, exhausted: false };
    this.windows.set(key, window);
    if (this.windows.size > this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
    return window;
  }

  private async refill(key: string, window: LocalWindow): Promise<void> {
    const granted = await this.options.lease({
      // The figure is part of the key: replicas configured alike share a count, a changed figure starts afresh.
      limitKey: `${this.options.group}:${this.options.perMinute}:${key}`,
      windowMinute: window.windowMinute,
      limit: this.options.perMinute,
      lease: this.leaseSize,
    });
    window.tokens += granted;
    if (granted === 0) window.exhausted = true;
  }

  /** Once a minute, the shared counts of finished minutes go (whichever replica gets there first). */
  private forgetOldWindows(windowMinute: number): void {
    if (windowMinute - 1 <= this.forgottenBefore) return;
    this.forgottenBefore = windowMinute - 1;
    this.options.forgetBefore(windowMinute - 1).catch((error: unknown) => this.warnOnce(error));
  }

  private warnOnce(error: unknown): void {
    const now = this.now();
    if (now - this.lastWarningAt < WINDOW_MS) return;
    this.lastWarningAt = now;
    this.options.logger.warn(
      { group: this.options.group, errorName: (error as Error)?.name, message: (error as Error)?.message },
      'shared request rate unavailable: counting on this replica alone',
    );
  }
}

/** The service-wide limits: login and public reads per client IP, paymaster requests per client id. */
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
  >;
  db: Db;
  logger: Logger;
  now?: () => number;
}): { login: RequestRate; publicSession: RequestRate; paymasterClient: RequestRate } {
  const rate = (group: string, perMinute: number) =>
    new LeasedRequestRate({
      group,
      perMinute,
      lease: (request) => leaseRequests(db, request),
      forgetBefore: (windowMinute) => deleteRequestRateWindowsBefore(db, windowMinute),
      logger,
      now,
    });
  return {
    login: rate('login', config.RATE_LIMIT_LOGIN_PER_MINUTE),
    publicSession: rate('publicSession', config.RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE),
    paymasterClient: rate('paymasterClient', config.PAYMASTER_RPC_PER_CLIENT_PER_MINUTE),
  };
}
