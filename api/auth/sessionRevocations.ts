import type { Logger } from '../../logging/logger';
import { NotificationListener } from './notificationListener';

/**
 * The signed-out session tokens (POST /v1/auth/logout), per process, kept current by Postgres as the
 * API-key cache is (api/auth/apiKeyCache.ts): migration 660's trigger announces each revocation on a
 * channel a dedicated connection LISTENs to, so a logout through one api process is refused by every
 * other within the round trip of a notification.
 *
 * The list is trusted only while its listener is known to be alive: LISTEN first, then the whole live
 * list is loaded (nothing committed in between is missed); a heartbeat every `heartbeatMs` proves the
 * connection still delivers, and one silent for `staleAfterMs` is not trusted. Whenever the list is not
 * trusted, each check asks the database, so a revocation is never missed, only answered more slowly.
 */

export interface SessionRevocationsOptions {
  connectionString: string;
  channel: string;
  /** Every revoked token id not yet expired, with its expiry. */
  loadLive(now: Date): Promise<{ token_id: string; expires_at: Date }[]>;
  /** Whether one token id is revoked, from the database. */
  lookup(tokenId: string): Promise<boolean>;
  logger: Logger;
  heartbeatMs?: number;
  staleAfterMs?: number;
  now?: () => number;
}

export interface SessionRevocationChecks {
  isRevoked(tokenId: string): Promise<boolean>;
  /** Adds a revocation this process just committed (the notification tells the others). */
  add(tokenId: string, expiresAt: Date): void;
  close(): Promise<void>;
}

export class SessionRevocationList implements SessionRevocationChecks {
  /** token id → expiry (epoch ms). */
  private readonly revoked = new Map<string, number>();
  private readonly listener: NotificationListener;

  constructor(private readonly options: SessionRevocationsOptions) {
    const now = options.now ?? Date.now;
    this.listener = new NotificationListener({
      connectionString: options.connectionString,
      channel: options.channel,
      applicationName: 'stablepay-session-revocations',
      logger: options.logger,
      lostMessage: 'session revocation listener lost; checking the database on each request',
      heartbeatMs: options.heartbeatMs,
      staleAfterMs: options.staleAfterMs,
      now,
      prepare: async () => {
        // Listening first: a revocation committed from here on arrives as a notification, one before is loaded.
        const live = await options.loadLive(new Date(now()));
        return () => {
          this.revoked.clear();
          for (const row of live) this.revoked.set(row.token_id, new Date(row.expires_at).getTime());
        };
      },
      onNotification: (payload) => {
        if (!payload) return;
        const [tokenId, expiresAtMs] = payload.split(' ');
        this.revoked.set(tokenId!, Number(expiresAtMs) || Number.POSITIVE_INFINITY);
      },
      onDown: () => undefined,
      // Expired tokens are refused by their signature check anyway: forget them.
      onBeat: (sentAt) => {
        for (const [tokenId, expiresAt] of this.revoked) if (expiresAt < sentAt) this.revoked.delete(tokenId);
      },
    });
  }

  async isRevoked(tokenId: string): Promise<boolean> {
    this.listener.start();
    if (this.listener.alive()) return this.revoked.has(tokenId);
    return this.options.lookup(tokenId);
  }

  add(tokenId: string, expiresAt: Date): void {
    this.revoked.set(tokenId, expiresAt.getTime());
  }

  close(): Promise<void> {
    return this.listener.close();
  }
}

/** Without a database URL to listen on: every check asks the database. */
export function uncachedSessionRevocations(
  lookup: (tokenId: string) => Promise<boolean>,
): SessionRevocationChecks {
  return { isRevoked: lookup, add: () => undefined, close: async () => undefined };
}
