import { microUsdToFixed6 } from '../money/microUsd';
import type { Db } from './client';
import { creditPrepaidBalance } from './prepaidLedger';
import type { SessionStatus } from './schema';

/**
 * Top-ups: a live payment session whose forwarders settle to the platform treasury. Each settlement the
 * treasury receives credits the prepaid ledger with its USDe (rounded down to micro-dollars), once; the
 * top-up keeps the running total. Its status is read from its session and whether anything was credited.
 */
export type TopupStatus = 'pending' | 'credited' | 'expired' | 'failed';

export interface TopupRow {
  id: string;
  session_id: string;
  amount_usd: string;
  credited_amount_usd: string;
  credited_at: Date | null;
  created_at: Date;
  status: TopupStatus;
}

/** The ledger reference of the credit for one settlement of a top-up (unique per merchant: credited once). */
export const topupSettlementReference = (topupId: string, settlementId: string) =>
  `topup:${topupId}:settlement:${settlementId}`;

/**
 * An expired session shows as expired (whatever arrived before was credited, see creditedAmount);
 * otherwise a credit makes it credited, and a failed or open session shows as such.
 */
function topupStatusOf(creditedAt: Date | null, sessionStatus: SessionStatus): TopupStatus {
  if (sessionStatus === 'expired') return 'expired';
  if (creditedAt) return 'credited';
  if (sessionStatus === 'failed') return 'failed';
  return 'pending';
}

const TOPUP_COLUMNS = [
  'id',
  'session_id',
  'amount_usd',
  'credited_amount_usd',
  'credited_at',
  'created_at',
] as const;

export async function insertTopup(
  db: Db,
  { merchantId, sessionId, amountUsd }: { merchantId: string; sessionId: string; amountUsd: string },
): Promise<TopupRow> {
  const row = await db
    .insertInto('topups')
    .values({ merchant_id: merchantId, session_id: sessionId, amount_usd: amountUsd })
    .returning(TOPUP_COLUMNS)
    .executeTakeFirstOrThrow();
  return { ...row, status: 'pending' };
}

/** The merchant's top-ups, newest first. */
export async function listTopups(db: Db, merchantId: string, limit = 100): Promise<TopupRow[]> {
  const rows = await db
    .selectFrom('topups')
    .innerJoin('sessions', 'sessions.id', 'topups.session_id')
    .select([
      ...TOPUP_COLUMNS.map((column) => `topups.${column}` as const),
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
 * Credits the top-up of `sessionId`, if it is one, with what one settlement delivered to the treasury.
 * Run it in the transaction that records the delivery: the locked top-up row and the unique ledger
 * reference make a replay or a concurrent call credit once. Returns the micro-dollars credited (0 when
 * the session is no top-up, the settlement was credited before, or it is worth less than a micro-dollar).
 */
export async function creditTopupForSettlement(
  trx: Db,
  {
    sessionId,
    settlementId,
    deliveredMicroUsd,
  }: { sessionId: string; settlementId: string; deliveredMicroUsd: bigint },
): Promise<bigint> {
  const topup = await trx
    .selectFrom('topups')
    .select(['id', 'merchant_id'])
    .where('session_id', '=', sessionId)
    .forUpdate()
    .executeTakeFirst();
  if (!topup || deliveredMicroUsd <= 0n) return 0n;
  const reference = topupSettlementReference(topup.id, settlementId);
  const earlier = await trx
    .selectFrom('prepaid_ledger_entries')
    .select('id')
    .where('merchant_id', '=', topup.merchant_id)
    .where('reference', '=', reference)
    .executeTakeFirst();
  if (earlier) return 0n;
  const amountUsd = microUsdToFixed6(deliveredMicroUsd);
  await creditPrepaidBalance(trx, {
    merchantId: topup.merchant_id,
    amountUsd,
    description: 'Prepaid gas top-up',
    reference,
  });
  await trx
    .updateTable('topups')
    .set((eb) => ({
      credited_amount_usd: eb('credited_amount_usd', '+', amountUsd),
      credited_at: eb.fn.coalesce('credited_at', eb.val(new Date())),
    }))
    .where('id', '=', topup.id)
    .execute();
  return deliveredMicroUsd;
}

/** Whether the session is a prepaid balance top-up (its forwarders pay the platform treasury). */
export async function isTopupSession(db: Db, sessionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('topups')
    .select('id')
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return row !== undefined;
}
