import type { Logger } from '../../logging/logger';
import { NotificationListener } from './notificationListener';

/**
 * Lookups by key, cached per process and invalidated by Postgres: a trigger announces every change of a
 * cached row on `channel` (payload: the key), and a dedicated connection LISTENs to it. Not a TTL: a change
 * committed anywhere reaches every process within the round trip of a notification. What the sk_ API-key
 * cache and the paymaster's client cache share.
 *
 * The cache is served only while the listener is known to be alive:
 * - it starts on the first lookup (creating the app opens no connection) and, until LISTEN is in place,
 *   every lookup goes to the database;
 * - a dropped connection (server restart, pg_terminate_backend, network) clears the cache and stops
 *   serving from it; the listener reconnects with backoff and clears the cache again once LISTEN is back,
 *   since a notification sent while it was away is lost;
 * - a heartbeat query every `heartbeatMs` proves the connection still delivers: notifications and replies
 *   share it in order, so a reply means every change committed before the query was sent has arrived.
 *   A connection silent for `staleAfterMs` (a dead peer the socket has not noticed) is not served from,
 *   which keeps the bound under a second even then;
 * - a lookup that started before an invalidation does not store its (possibly stale) answer: a counter
 *   moves on every notification, clear and outage, and the answer is kept only if it did not move.
 * Only found rows are cached: an unknown key goes to the database every time, so a row created a moment
 * ago works at once everywhere.
 */
export interface ListenedCacheOptions<Value> {
  /** The database the api uses (DATABASE_URL): the listener opens its own connection to it. */
  connectionString: string;
  channel: string;
  /** `application_name` of the listening connection, for pg_stat_activity. */
  applicationName: string;
  /** Logged when the listening connection is lost. */
  lostMessage: string;
  /** The database lookup; undefined for a key that must not be served (unknown, revoked). */
  lookup(key: string): Promise<Value | undefined>;
  /** Called with each answer served from the cache (the API-key cache records a last use). */
  onHit?(value: Value): void;
  logger: Logger;
  heartbeatMs?: number;
  staleAfterMs?: number;
  /** Entries kept; past it the oldest goes first. */
  maxEntries?: number;
  now?: () => number;
}

export interface ListenedCacheStats {
  hits: number;
  misses: number;
  /** Whether lookups are served from the cache right now. */
  serving: boolean;
  /** Times LISTEN was (re)established. */
  listens: number;
}

export class ListenedCache<Value> {
  private readonly entries = new Map<string, Value>();
  private readonly listener: NotificationListener;
  private readonly maxEntries: number;
  /** Moves on every invalidation; a lookup stores its answer only if it did not move meanwhile. */
  private epoch = 0;
  private readonly counters = { hits: 0, misses: 0, listens: 0 };

  constructor(private readonly options: ListenedCacheOptions<Value>) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.listener = new NotificationListener({
      connectionString: options.connectionString,
      channel: options.channel,
      applicationName: options.applicationName,
      logger: options.logger,
      lostMessage: options.lostMessage,
      heartbeatMs: options.heartbeatMs,
      staleAfterMs: options.staleAfterMs,
      now: options.now,
      // Whatever changed while nobody listened was not announced to this process.
      prepare: async () => () => {
        this.clear();
        this.counters.listens += 1;
      },
      onNotification: (key) => (key ? this.invalidate(key) : this.clear()),
      onDown: () => this.clear(),
    });
  }

  /** The value for `key`, from the cache while the listener is alive, else from the database. */
  async find(key: string): Promise<Value | undefined> {
    this.listener.start();
    const serving = this.listener.alive();
    if (serving) {
      const entry = this.entries.get(key);
      if (entry !== undefined) {
        this.counters.hits += 1;
        this.options.onHit?.(entry);
        return entry;
      }
    }
    this.counters.misses += 1;
    const epoch = this.epoch;
    const found = await this.options.lookup(key);
    if (found !== undefined && serving && this.epoch === epoch && this.listener.alive()) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, found);
    }
    return found;
  }

  /** Drops one key: a route that changed its row calls it after the commit, for this process (the trigger tells the others). */
  invalidate(key: string): void {
    this.epoch += 1;
    this.entries.delete(key);
  }

  stats(): ListenedCacheStats {
    return { ...this.counters, serving: this.listener.alive() };
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  private clear(): void {
    this.epoch += 1;
    this.entries.clear();
  }
}

/** The cache's face to its users; `uncachedLookups` gives the same face without a listener (no database URL). */
export type CachedLookups<Value> = Pick<ListenedCache<Value>, 'find' | 'invalidate' | 'stats' | 'close'>;

export function uncachedLookups<Value>(
  lookup: (key: string) => Promise<Value | undefined>,
): CachedLookups<Value> {
  const counters = { hits: 0, misses: 0, listens: 0 };
  return {
    find: (key) => {
      counters.misses += 1;
      return lookup(key);
    },
    invalidate: () => undefined,
    stats: () => ({ ...counters, serving: false }),
    close: async () => undefined,
  };
}
