import { sql, type Selectable } from 'kysely';
import { microUsdToFixed6 } from '../money/microUsd';
import type { Db } from './client';
import { markDepositsSettled } from './deposits';
import type { SettlementsTable } from './schema';
import { creditTopupForSettlement } from './topups';

export type SettlementRow = Selectable<SettlementsTable>;

/** One option of a session: the (session, chain, token) a forwarder flushes. */
interface SettlementOption {
  sessionId: string;
  chainId: number;
  tokenAddress: string;
}

function settlementsOf(db: Db, { sessionId, chainId, tokenAddress }: SettlementOption) {
  return db
    .selectFrom('settlements')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('chain_id', '=', chainId)
    .where('token_address', '=', tokenAddress.toLowerCase());
}

/** The flush of this (session, chain, token) still waiting for its transaction, if one was prepared. */
async function findPendingSettlement(db: Db, option: SettlementOption): Promise<SettlementRow | undefined> {
  return settlementsOf(db, option).where('flush_tx_hash', 'is', null).executeTakeFirst();
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

/**
 * Records the signed flush transaction, its hash and nonce before it is broadcast: after a crash the
 * retry re-sends exactly this transaction (or sees it mined), never a second flush.
 */
export async function recordFlushSigned(
  db: Db,
  id: string,
  flush: { rawTransaction: string; txHash: string; nonce: number },
): Promise<void> {
  await db
    .updateTable('settlements')
    .set({
      flush_raw_tx: flush.rawTransaction,
      flush_tx_hash: flush.txHash,
      flush_nonce: BigInt(flush.nonce),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .execute();
}

/** A flush recorded (signed, maybe broadcast) whose outcome is not stored yet, if any. */
export async function findUnfinishedFlush(
  db: Db,
  option: SettlementOption,
): Promise<SettlementRow | undefined> {
  return settlementsOf(db, option)
    .where('flush_tx_hash', 'is not', null)
    .where('usde_amount', 'is', null)
    .executeTakeFirst();
}

/**
 * Whether a flush of this (session, chain, token) is prepared, signed or in flight and not yet stored as
 * mined: it sweeps the forwarder's balance, so no forwarder refund may be promised that money meanwhile.
 */
export async function hasFlushInFlight(db: Db, option: SettlementOption): Promise<boolean> {
  const row = await settlementsOf(db, option).where('usde_amount', 'is', null).executeTakeFirst();
  return row !== undefined;
}

export interface FlushedEvent {
  amountIn: bigint;
  usdeAmount: bigint;
  bridged: boolean;
  sharesOrNonce: bigint;
}

/**
 * Stores a mined flush in one transaction: its outcome, the deposits it swept, the USD the session has
 * settled (the stablecoin in, at par, rounded down), and, when the USDe was staked right here, the
 * delivery and a top-up's credit. A replay finds the outcome stored and changes nothing; returns whether
 * this call stored it.
 */
export async function recordFlushSettled(
  db: Db,
  row: Pick<SettlementRow, 'id' | 'session_id' | 'chain_id' | 'token_address'>,
  {
    flushed,
    settledMicroUsd,
    deliveredMicroUsd,
  }: { flushed: FlushedEvent; settledMicroUsd: bigint; deliveredMicroUsd: bigint },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const now = new Date();
    const updated = await trx
      .updateTable('settlements')
      .set({
        amount_in: flushed.amountIn.toString(),
        usde_amount: flushed.usdeAmount.toString(),
        bridged: flushed.bridged,
        shares: flushed.bridged ? null : flushed.sharesOrNonce.toString(),
        message_nonce: flushed.bridged ? flushed.sharesOrNonce : null,
        delivered_usde: flushed.bridged ? null : flushed.usdeAmount.toString(),
        delivered_at: flushed.bridged ? null : now,
        // Staked right here: the flush is the transaction that delivered the sUSDe.
        delivery_chain_id: flushed.bridged ? null : row.chain_id,
        delivery_tx_hash: flushed.bridged ? null : sql<string>`flush_tx_hash`,
        updated_at: now,
      })
      .where('id', '=', row.id)
      .where('usde_amount', 'is', null)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) return false;
    await markDepositsSettled(trx, {
      sessionId: row.session_id,
      chainId: row.chain_id,
      tokenAddress: row.token_address,
    });
    await trx
      .updateTable('sessions')
      .set((eb) => ({ settled_amount: eb('settled_amount', '+', microUsdToFixed6(settledMicroUsd)) }))
      .where('id', '=', row.session_id)
      .execute();
    if (!flushed.bridged)
      await creditTopupForSettlement(trx, {
        sessionId: row.session_id,
        settlementId: row.id,
        deliveredMicroUsd,
      });
    return true;
  });
}

/** A failed flush transaction: forget it so the next attempt prepares afresh. */
export async function discardFlush(db: Db, id: string): Promise<void> {
  await db.deleteFrom('settlements').where('id', '=', id).execute();
}

/**
 * The bridged USDe was staked on the settlement chain: stores the delivery and, for a top-up, credits what
 * the treasury received, in one transaction (a replay changes nothing).
 */
export async function recordBridgeDelivered(
  db: Db,
  row: Pick<SettlementRow, 'id' | 'session_id'>,
  {
    shares,
    usdeAmount,
    deliveredMicroUsd,
    chainId,
    txHash,
  }: { shares: bigint; usdeAmount: bigint; deliveredMicroUsd: bigint; chainId: number; txHash: string },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('settlements')
      .set({
        delivered_at: new Date(),
        shares: shares.toString(),
        delivered_usde: usdeAmount.toString(),
        delivery_chain_id: chainId,
        delivery_tx_hash: txHash,
        updated_at: new Date(),
      })
      .where('id', '=', row.id)
      .where('delivered_at', 'is', null)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) return;
    await creditTopupForSettlement(trx, {
      sessionId: row.session_id,
      settlementId: row.id,
      deliveredMicroUsd,
    });
  });
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
