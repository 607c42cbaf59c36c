import type { ActiveApiKey } from '../../db/apiKeys';
import type { Logger } from '../../logging/logger';
import { ListenedCache, uncachedLookups, type CachedLookups } from './listenedCache';

/**
 * API-key lookups by key hash, cached per process and invalidated by Postgres (api/auth/listenedCache.ts):
 * the api_keys trigger (migration 610) announces every revoked, re-hashed, moved or deleted key on
 * API_KEY_CHANGES_CHANNEL. Only active keys are cached: an unknown or revoked hash goes to the database
 * every time, so a key created a moment ago works at once everywhere. A key served from the cache still
 * records its last use, at most once per `touchEveryMs`.
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

interface Entry extends ActiveApiKey {
  touchedAt: number;
}

export class ApiKeyCache implements ApiKeyLookups {
  private readonly cache: ListenedCache<Entry>;
  private readonly touchEveryMs: number;
  private readonly now: () => number;

  constructor(private readonly options: ApiKeyCacheOptions) {
    this.touchEveryMs = options.touchEveryMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.cache = new ListenedCache<Entry>({
      connectionString: options.connectionString,
      channel: options.channel,
      applicationName: 'stablepay-api-key-cache',
      lostMessage: 'api key cache listener lost; serving from the database',
      // The lookup itself records the use, so an entry starts touched.
      lookup: async (keyHash) => {
        const found = await options.lookup(keyHash);
        return found && { ...found, touchedAt: this.now() };
      },
      onHit: (entry) => this.touchIfDue(entry),
      logger: options.logger,
      heartbeatMs: options.heartbeatMs,
      staleAfterMs: options.staleAfterMs,
      maxEntries: options.maxEntries,
      now: this.now,
    });
  }

  /** The active key with this hash, from the cache while the listener is alive, else from the database. */
  find(keyHash: string): Promise<ActiveApiKey | undefined> {
    return this.cache.find(keyHash);
  }

  /** Drops one key (the revoke route calls it after its commit, for this process; the trigger tells the others). */
  invalidate(keyHash: string): void {
    this.cache.invalidate(keyHash);
  }

  stats() {
    return this.cache.stats();
  }

  close(): Promise<void> {
    return this.cache.close();
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
export type ApiKeyLookups = CachedLookups<ActiveApiKey>;

export const uncachedApiKeyLookups = uncachedLookups<ActiveApiKey>;
