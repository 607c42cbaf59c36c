import type { Selectable } from 'kysely';
import type { Db } from './client';
import type { SettlementsTable } from './schema';

export type SettlementRow = Selectable<SettlementsTable>;

/** The flush of this (session, chain, token) still waiting for its transaction, if one was prepared. */
async function findPendingSettlement(
  db: Db,
  { sessionId, chainId, tokenAddress }: { sessionId: string; chainId: number; tokenAddress: string },
): Promise<SettlementRow | undefined> {
  return db
    .selectFrom('settlements')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('chain_id', '=', chainId)
    .where('token_address', '=', tokenAddress.toLowerCase())
    .where('flush_tx_hash', 'is', null)
    .executeTakeFirst();
}

export async function listSettlements(db: Db, sessionId: string): Promise<SettlementRow[]> {
  return db
    .selectFrom('settlements')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .execute();
}

/** Prepares a flush row (at most one pending per session, chain and token, by a partial unique index). */
export async function preparePendingSettlement(
  db: Db,
  row: { sessionId: string; chainId: number; tokenAddress: string; forwarderAddress: string },
): Promise<SettlementRow> {
  await db
    .insertInto('settlements')
    .values({
      session_id: row.sessionId,
      chain_id: row.chainId,
      token_address: row.tokenAddress.toLowerCase(),
      forwarder_address: row.forwarderAddress,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['session_id', 'chain_id', 'token_address'])
        .where('flush_tx_hash', 'is', null)
        .doNothing(),
    )
    .execute();
  return (await findPendingSettlement(db, row))!;
}

/** Records the flush transaction the moment it is sent, before waiting for it (a crash then waits, never resends). */
export async function recordFlushSent(db: Db, id: string, flushTxHash: string): Promise<void> {
  await db
    .updateTable('settlements')
    .set({ flush_tx_hash: flushTxHash, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

export async function recordFlushOutcome(
  db: Db,
  id: string,
  outcome: { amountIn: bigint; usdeAmount: bigint; bridged: boolean; sharesOrNonce: bigint },
): Promise<void> {
  await db
    .updateTable('settlements')
    .set({
      amount_in: outcome.amountIn.toString(),
      usde_amount: outcome.usdeAmount.toString(),
      bridged: outcome.bridged,
      shares: outcome.bridged ? null : outcome.sharesOrNonce.toString(),
      message_nonce: outcome.bridged ? outcome.sharesOrNonce : null,
      delivered_at: outcome.bridged ? null : new Date(),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .execute();
}

/** A failed flush transaction: forget it so the next attempt prepares afresh. */
export async function discardFlush(db: Db, id: string): Promise<void> {
  await db.deleteFrom('settlements').where('id', '=', id).execute();
}

export async function recordBridgeDelivered(db: Db, id: string, shares: bigint): Promise<void> {
  await db
    .updateTable('settlements')
    .set({ delivered_at: new Date(), shares: shares.toString(), updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

/** Which of these transactions are our own flushes (their internal transfers into a forwarder are not deposits). */
export async function findFlushTransactions(db: Db, txHashes: string[]): Promise<Set<string>> {
  if (txHashes.length === 0) return new Set();
  const rows = await db
    .selectFrom('settlements')
    .select('flush_tx_hash')
    .where('flush_tx_hash', 'in', txHashes)
    .execute();
  return new Set(rows.map((row) => row.flush_tx_hash!));
}
