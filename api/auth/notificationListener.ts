import { Client } from 'pg';
import type { Logger } from '../../logging/logger';

/**
 * A dedicated Postgres connection LISTENing to one channel, with the liveness rules the per-process
 * caches of the api rely on (the API-key cache, the session revocation list):
 * - it starts on first use (creating the app opens no connection);
 * - after LISTEN, `prepare` loads what the cache needs (a notification committed from then on arrives,
 *   one before is in the load) and its result is applied only if this connection is still the current one;
 * - a heartbeat every `heartbeatMs` (one in flight at a time) proves the connection still delivers:
 *   notifications and replies share it in order, so a reply means every change committed before the query
 *   was sent has arrived. One silent for `staleAfterMs` (a dead peer the socket has not noticed) is not trusted;
 * - a dropped connection calls `onDown` and reconnects with backoff.
 * The cache is served only while `alive()` is true; otherwise its owner asks the database.
 */
export interface NotificationListenerOptions {
  connectionString: string;
  channel: string;
  /** `application_name` of the connection, for pg_stat_activity. */
  applicationName: string;
  logger: Logger;
  /** Logged (with the retry delay) when the connection is lost. */
  lostMessage: string;
  /** After LISTEN: loads what was missed; the returned function applies it if the connection is still current. */
  prepare(): Promise<() => void>;
  onNotification(payload: string | undefined): void;
  /** The connection failed, ended or was closed: the cache must not be served from. */
  onDown(): void;
  /** A heartbeat came back; `sentAt` is when it was sent. */
  onBeat?(sentAt: number): void;
  heartbeatMs?: number;
  staleAfterMs?: number;
  now?: () => number;
}

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export class NotificationListener {
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly now: () => number;
  private listening = false;
  /** When the last heartbeat that came back was sent. */
  private aliveAt = 0;
  private client: Client | undefined;
  private started = false;
  private closed = false;
  private reconnectDelayMs = RECONNECT_MIN_MS;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: NotificationListenerOptions) {
    this.heartbeatMs = options.heartbeatMs ?? 250;
    this.staleAfterMs = options.staleAfterMs ?? 750;
    this.now = options.now ?? Date.now;
  }

  /** Connects on the first call (the owner calls it on first use); later calls do nothing. */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.connect();
  }

  /** True while its notifications are known to arrive. */
  alive(): boolean {
    return this.listening && this.now() - this.aliveAt <= this.staleAfterMs;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.goneDown();
    clearTimeout(this.reconnectTimer);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({
      connectionString: this.options.connectionString,
      application_name: this.options.applicationName,
      keepAlive: true,
    });
    this.client = client;
    client.on('notification', (message) => {
      if (client === this.client) this.options.onNotification(message.payload || undefined);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
      const apply = await this.options.prepare();
      if (client !== this.client || this.closed) return;
      apply();
      this.aliveAt = this.now();
      this.listening = true;
      this.reconnectDelayMs = RECONNECT_MIN_MS;
      // One heartbeat in flight at a time: while the server is slow or frozen, beats sent on every tick would
      // queue on the client (pg deprecates a query issued while another runs) and pile up without bound.
      // The one that comes back still proves delivery up to when it was sent; the next tick sends a new one.
      let beating = false;
      this.heartbeat = setInterval(() => {
        if (beating) return;
        beating = true;
        void this.beat(client).finally(() => {
          beating = false;
        });
      }, this.heartbeatMs);
      this.heartbeat.unref();
    } catch {
      this.lost(client);
    }
  }

  /** Sends one heartbeat; settles when its reply came back or the connection was given up. */
  private beat(client: Client): Promise<void> {
    const sentAt = this.now();
    return client.query('SELECT 1').then(
      () => {
        if (client !== this.client || !this.listening) return;
        this.aliveAt = Math.max(this.aliveAt, sentAt);
        this.options.onBeat?.(sentAt);
      },
      () => this.lost(client),
    );
  }

  /** The connection failed or ended: stop trusting it, reconnect with backoff. */
  private lost(client: Client): void {
    if (client !== this.client) return;
    this.goneDown();
    if (this.closed) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(RECONNECT_MAX_MS, this.reconnectDelayMs * 2);
    this.options.logger.warn({ retryInMs: delay }, this.options.lostMessage);
    this.reconnectTimer = setTimeout(() => void this.connect(), delay);
    this.reconnectTimer.unref();
  }

  private goneDown(): void {
    this.listening = false;
    this.options.onDown();
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    client?.removeAllListeners('notification');
    client?.on('error', () => undefined);
    client?.end().catch(() => undefined);
  }
}
