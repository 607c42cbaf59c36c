import { sql } from 'kysely';
import type { Db } from './client';

/** How often a sender waiting for another process's send tries the lock again. */
const RETRY_EVERY_MS = 25;

export class SenderLockTimeoutError extends Error {
  override name = 'SenderLockTimeoutError';
  constructor(chainId: number, address: string, waitedMs: number) {
    super(`sender ${address} on chain ${chainId} stayed locked by another send for ${waitedMs} ms`);
  }
}

/**
 * Runs `work` while this process holds the lock of one sending key on one chain, across every process
 * on the database: the transactions of that key on that chain are numbered one at a time, while other
 * chains and other keys go on in parallel. A session-level advisory lock (not a transaction: `work`
 * waits on chain RPC longer than an idle transaction may stay open) on one pooled connection, which
 * `work` gets to use so it needs no second one. A process that dies holding it loses its connection,
 * and with it the lock. Waiting takes no connection: the lock is tried, and the connection given back
 * until the next try, so waiters never starve the holder's pool.
 */
export async function withSenderLock<T>(
  db: Db,
  { chainId, address }: { chainId: number; address: string },
  work: (locked: Db) => Promise<T>,
  { waitMs = 120_000 }: { waitMs?: number } = {},
): Promise<T> {
  const key = `sender-nonce:${chainId}:${address.toLowerCase()}`;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const outcome = await db.connection().execute(async (connection) => {
      const { rows } = await sql<{ locked: boolean }>`
        SELECT pg_try_advisory_lock(hashtextextended(${key}, 0)) AS locked`.execute(connection);
      if (!rows[0]?.locked) return undefined;
      try {
        return { value: await work(connection) };
      } finally {
        await sql`SELECT pg_advisory_unlock(hashtextextended(${key}, 0))`.execute(connection);
      }
    });
    if (outcome) return outcome.value;
    if (Date.now() > deadline) throw new SenderLockTimeoutError(chainId, address, waitMs);
    await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
  }
}
