import { Client } from 'pg';
import type { Logger } from '../../logging/logger';

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

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export class SessionRevocationList implements SessionRevocationChecks {
  /** token id → expiry (epoch ms). */
  private readonly revoked = new Map<string, number>();
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly now: () => number;
  private listening = false;
  private aliveAt = 0;
  private client: Client | undefined;
  private started = false;
  private closed = false;
  private reconnectDelayMs = RECONNECT_MIN_MS;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SessionRevocationsOptions) {
    this.heartbeatMs = options.heartbeatMs ?? 250;
    this.staleAfterMs = options.staleAfterMs ?? 750;
    this.now = options.now ?? Date.now;
  }

  async isRevoked(tokenId: string): Promise<boolean> {
    if (!this.started) this.start();
    if (this.serving()) return this.revoked.has(tokenId);
    return this.options.lookup(tokenId);
  }

  add(tokenId: string, expiresAt: Date): void {
    this.revoked.set(tokenId, expiresAt.getTime());
  }

  async close(): Promise<void> {
    this.closed = true;
    this.goneDown();
    clearTimeout(this.reconnectTimer);
  }

  private serving(): boolean {
    return this.listening && this.now() - this.aliveAt <= this.staleAfterMs;
  }

  private start(): void {
    this.started = true;
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({
      connectionString: this.options.connectionString,
      application_name: 'stablepay-session-revocations',
      keepAlive: true,
    });
    this.client = client;
    client.on('notification', (message) => {
      if (client !== this.client || !message.payload) return;
      const [tokenId, expiresAtMs] = message.payload.split(' ');
      this.revoked.set(tokenId!, Number(expiresAtMs) || Number.POSITIVE_INFINITY);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
      // Listening first: a revocation committed from here on arrives as a notification, one before is loaded.
      const live = await this.options.loadLive(new Date(this.now()));
      if (client !== this.client || this.closed) return;
      this.revoked.clear();
      for (const row of live) this.revoked.set(row.token_id, new Date(row.expires_at).getTime());
      this.aliveAt = this.now();
      this.listening = true;
      this.reconnectDelayMs = RECONNECT_MIN_MS;
      this.heartbeat = setInterval(() => this.beat(client), this.heartbeatMs);
      this.heartbeat.unref();
    } catch {
      this.lost(client);
    }
  }

  private beat(client: Client): void {
    const sentAt = this.now();
    client.query('SELECT 1').then(
      () => {
        if (client !== this.client || !this.listening) return;
        this.aliveAt = Math.max(this.aliveAt, sentAt);
        // Expired tokens are refused by their signature check anyway: forget them.
        for (const [tokenId, expiresAt] of this.revoked) if (expiresAt < sentAt) this.revoked.delete(tokenId);
      },
      () => this.lost(client),
    );
  }

  private lost(client: Client): void {
    if (client !== this.client) return;
    this.goneDown();
    if (this.closed) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(RECONNECT_MAX_MS, this.reconnectDelayMs * 2);
    this.options.logger.warn(
      { retryInMs: delay },
      'session revocation listener lost; checking the database on each request',
    );
    this.reconnectTimer = setTimeout(() => void this.connect(), delay);
    this.reconnectTimer.unref();
  }

  private goneDown(): void {
    this.listening = false;
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    client?.removeAllListeners('notification');
    client?.on('error', () => undefined);
    client?.end().catch(() => undefined);
  }
}

/** Without a database URL to listen on: every check asks the database. */
export function uncachedSessionRevocations(
  lookup: (tokenId: string) => Promise<boolean>,
): SessionRevocationChecks {
  return { isRevoked: lookup, add: () => undefined, close: async () => undefined };
}
