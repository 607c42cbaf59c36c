import type { ActiveApiKey } from '../../db/apiKeys';
import type { Logger } from '../../logging/logger';
import { NotificationListener } from './notificationListener';

/**
 * API-key lookups by key hash, cached per process and invalidated by Postgres: the api_keys trigger
 * (migration 610) announces every revoked, re-hashed, moved or deleted key on API_KEY_CHANGES_CHANNEL,
 * and a dedicated connection LISTENs to it. Not a TTL: a revocation committed anywhere reaches every
 * process within the round trip of a notification.
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
 * Only active keys are cached: an unknown or revoked hash goes to the database every time, as before,
 * so a key created a moment ago works at once everywhere.
 */

export interface ApiKeyCacheOptions {
  /** The database the api uses (DATABASE_URL): the listener opens its own connection to it. */
  connectionString: string;
  channel: string;
  /** The database lookup of an active key by hash (it also records the last use). */
  lookup(keyHash: string): Promise<ActiveApiKey | undefined>;
  /** Records a use of a key served from the cache (the lookup's "at most once a minute"). */
  touch(id: string): Promise<void>;
  logger: Logger;
  heartbeatMs?: number;
  staleAfterMs?: number;
  /** Entries kept; past it the oldest goes first. */
  maxEntries?: number;
  /** A served key's last use is recorded again after this long. */
  touchEveryMs?: number;
  now?: () => number;
}

export interface ApiKeyCacheStats {
  hits: number;
  misses: number;
  /** Whether lookups are served from the cache right now. */
  serving: boolean;
  /** Times LISTEN was (re)established. */
  listens: number;
}

interface Entry extends ActiveApiKey {
  touchedAt: number;
}

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly listener: NotificationListener;
  private readonly maxEntries: number;
  private readonly touchEveryMs: number;
  private readonly now: () => number;
  /** Moves on every invalidation; a lookup stores its answer only if it did not move meanwhile. */
  private epoch = 0;
  private readonly counters = { hits: 0, misses: 0, listens: 0 };

  constructor(private readonly options: ApiKeyCacheOptions) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.touchEveryMs = options.touchEveryMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.listener = new NotificationListener({
      connectionString: options.connectionString,
      channel: options.channel,
      applicationName: 'stablepay-api-key-cache',
      logger: options.logger,
      lostMessage: 'api key cache listener lost; serving from the database',
      heartbeatMs: options.heartbeatMs,
      staleAfterMs: options.staleAfterMs,
      now: this.now,
      // Whatever changed while nobody listened was not announced to this process.
      prepare: async () => () => {
        this.clear();
        this.counters.listens += 1;
      },
      onNotification: (keyHash) => (keyHash ? this.invalidate(keyHash) : this.clear()),
      onDown: () => this.clear(),
    });
  }

  /** The active key with this hash, from the cache while the listener is alive, else from the database. */
  async find(keyHash: string): Promise<ActiveApiKey | undefined> {
    this.listener.start();
    const serving = this.serving();
    if (serving) {
      const entry = this.entries.get(keyHash);
      if (entry) {
        this.counters.hits += 1;
        this.touchIfDue(entry);
        return entry;
      }
    }
    this.counters.misses += 1;
    const epoch = this.epoch;
    const found = await this.options.lookup(keyHash);
    if (found && serving && this.epoch === epoch && this.serving()) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(keyHash, { ...found, touchedAt: this.now() });
    }
    return found;
  }

  /** Drops one key (the revoke route calls it after its commit, for this process; the trigger tells the others). */
  invalidate(keyHash: string): void {
    this.epoch += 1;
    this.entries.delete(keyHash);
  }

  stats(): ApiKeyCacheStats {
    return { ...this.counters, serving: this.serving() };
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  private serving(): boolean {
    return this.listener.alive();
  }

  private clear(): void {
    this.epoch += 1;
    this.entries.clear();
  }

  private touchIfDue(entry: Entry): void {
    const now = this.now();
    if (now - entry.touchedAt < this.touchEveryMs) return;
    entry.touchedAt = now;
    // The last use is advisory: a failed write must not fail a request whose key is valid.
    this.options
      .touch(entry.id)
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'api key last use not recorded'));
  }
}

/** What authentication and the key routes use: the cache, or plain lookups when there is no database URL to listen on. */
export type ApiKeyLookups = Pick<ApiKeyCache, 'find' | 'invalidate' | 'stats' | 'close'>;

export function uncachedApiKeyLookups(
  lookup: (keyHash: string) => Promise<ActiveApiKey | undefined>,
): ApiKeyLookups {
  const counters = { hits: 0, misses: 0, listens: 0 };
  return {
    find: (keyHash) => {
      counters.misses += 1;
      return lookup(keyHash);
    },
    invalidate: () => undefined,
    stats: () => ({ ...counters, serving: false }),
    close: async () => undefined,
  };
}
