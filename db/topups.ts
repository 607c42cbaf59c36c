import type { Db } from './client';
import { creditPrepaidBalance } from './prepaidLedger';
import type { SessionStatus } from './schema';
import { transitionSession } from './sessions';

/**
 * Top-ups: a payment session the merchant pays to itself, credited to the prepaid ledger once when the
 * session completes. Only `credited_at` is stored; the other states are read from the session.
 */
export type TopupStatus = 'pending' | 'credited' | 'expired' | 'failed';

export interface TopupRow {
  id: string;
  session_id: string;
  amount_usd: string;
  credited_at: Date | null;
  created_at: Date;
  status: TopupStatus;
}

/** The ledger reference of a top-up's credit (unique per merchant, so a top-up credits once). */
export const topupReference = (topupId: string) => `topup:${topupId}`;

/** A credited top-up is credited whatever its session does later; otherwise the session's end decides. */
function topupStatusOf(creditedAt: Date | null, sessionStatus: SessionStatus): TopupStatus {
  if (creditedAt) return 'credited';
  if (sessionStatus === 'expired') return 'expired';
  if (sessionStatus === 'failed') return 'failed';
  return 'pending';
}

export async function insertTopup(
  db: Db,
  { merchantId, sessionId, amountUsd }: { merchantId: string; sessionId: string; amountUsd: string },
): Promise<TopupRow> {
  const row = await db
    .insertInto('topups')
    .values({ merchant_id: merchantId, session_id: sessionId, amount_usd: amountUsd })
    .returning(['id', 'session_id', 'amount_usd', 'credited_at', 'created_at'])
    .executeTakeFirstOrThrow();
  return { ...row, status: 'pending' };
}

/** The merchant's top-ups, newest first. */
export async function listTopups(db: Db, merchantId: string, limit = 100): Promise<TopupRow[]> {
  const rows = await db
    .selectFrom('topups')
    .innerJoin('sessions', 'sessions.id', 'topups.session_id')
    .select([
      'topups.id',
      'topups.session_id',
      'topups.amount_usd',
      'topups.credited_at',
      'topups.created_at',
      'sessions.status as session_status',
    ])
    .where('topups.merchant_id', '=', merchantId)
    .orderBy('topups.seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map(({ session_status, ...row }) => ({
    ...row,
    status: topupStatusOf(row.credited_at, session_status),
  }));
}

/**
 * Credits the top-up linked to a completed session, if any and not yet credited. Run it inside a
 * transaction: the row lock plus `credited_at` make a replay or a concurrent call credit once, and the
 * unique ledger reference backs that up. Returns whether a credit was written.
 */
export async function creditTopupOfSession(trx: Db, sessionId: string): Promise<boolean> {
  const topup = await trx
    .selectFrom('topups')
    .innerJoin('sessions', 'sessions.id', 'topups.session_id')
    .select(['topups.id', 'topups.merchant_id', 'topups.amount_usd', 'topups.credited_at', 'sessions.status'])
    .where('topups.session_id', '=', sessionId)
    .forUpdate('topups')
    .executeTakeFirst();
  if (!topup || topup.credited_at !== null || topup.status !== 'completed') return false;
  await creditPrepaidBalance(trx, {
    merchantId: topup.merchant_id,
    amountUsd: topup.amount_usd,
    description: 'Prepaid gas top-up',
    reference: topupReference(topup.id),
  });
  await trx.updateTable('topups').set({ credited_at: new Date() }).where('id', '=', topup.id).execute();
  return true;
}

/**
 * The workflow's completion step: confirming or bridging → completed and the linked top-up's credit in
 * one transaction, so the session never shows completed without its credit. A replay finds the session
 * completed and the top-up credited, and changes nothing. Returns whether the session moved.
 */
export async function completeSessionAndCreditTopup(db: Db, sessionId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const moved = await transitionSession(trx, {
      id: sessionId,
      from: ['confirming', 'bridging'],
      to: 'completed',
    });
    await creditTopupOfSession(trx, sessionId);
    return moved;
  });
}
