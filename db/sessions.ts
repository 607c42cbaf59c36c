import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from './client';
import type { EventRow } from './events';
import type { PaymentOptionsTable, SessionsTable, SessionStatus } from './schema';
import {
  receivedBeforeExpiry,
  settlementReceived,
  storeSessionEvent,
  type SessionEventSerialiser,
} from './sessionEvents';
import { receivedAmountOf, usdDifference, usdExceeds } from './receivedAmounts';
import { normaliseDecimal, toBaseUnits } from '../money/baseUnits';

export type SessionRow = Selectable<SessionsTable>;
export type PaymentOptionRow = Selectable<PaymentOptionsTable>;
export type NewSession = Insertable<SessionsTable>;
export type NewPaymentOption = Omit<Insertable<PaymentOptionsTable>, 'session_id' | 'session_expires_at'>;

/** A session in `awaiting_payment` past its expiry reads as `expired` (SPEC rule 1: no job flips it). */
export function effectiveStatus(
  session: Pick<SessionRow, 'status' | 'expires_at'>,
  now: Date,
): SessionStatus {
  return session.status === 'awaiting_payment' && session.expires_at.getTime() <= now.getTime()
    ? 'expired'
    : session.status;
}

/** Inserts a session and its payment options; call inside a transaction so both land or neither. */
export async function insertSessionWithOptions(
  trx: Db,
  session: NewSession,
  options: NewPaymentOption[],
): Promise<SessionRow> {
  const row = await trx.insertInto('sessions').values(session).returningAll().executeTakeFirstOrThrow();
  if (options.length) {
    await trx
      .insertInto('payment_options')
      .values(
        options.map((option) => ({ ...option, session_id: row.id, session_expires_at: row.expires_at })),
      )
      .execute();
  }
  return row;
}

/**
 * The same rows as insertSessionWithOptions in one statement (the options in a data-modifying CTE): one
 * round trip, atomic on its own, so a caller that writes nothing else needs no transaction around it.
 */
export async function insertSessionWithOptionsAtOnce(
  db: Db,
  session: NewSession,
  options: NewPaymentOption[],
): Promise<SessionRow> {
  const withSession = db.with('session', (query) =>
    query.insertInto('sessions').values(session).returningAll(),
  );
  if (options.length === 0) return withSession.selectFrom('session').selectAll().executeTakeFirstOrThrow();
  return withSession
    .with('options', (query) =>
      query
        .insertInto('payment_options')
        .values(
          options.map((option) => ({
            ...option,
            session_id: session.id,
            session_expires_at: session.expires_at,
          })),
        )
        .returning('payment_options.id'),
    )
    .selectFrom('session')
    .selectAll()
    .executeTakeFirstOrThrow();
}

export async function findSessionById(db: Db, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The session only if it belongs to `merchantId`: another merchant's id reads as unknown. */
export async function findMerchantSession(
  db: Db,
  merchantId: string,
  id: string,
): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** The chains a session can be paid on (its payment options'), without the options' other columns. */
export async function listPaymentOptionChainIds(db: Db, sessionId: string): Promise<number[]> {
  const rows = await db
    .selectFrom('payment_options')
    .select('chain_id')
    .distinct()
    .where('session_id', '=', sessionId)
    .execute();
  return rows.map((row) => row.chain_id);
}

export async function listPaymentOptions(db: Db, sessionId: string): Promise<PaymentOptionRow[]> {
  return db
    .selectFrom('payment_options')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('chain_id')
    .orderBy('symbol')
    .execute();
}

export interface ListMerchantSessionsParameters {
  merchantId: string;
  limit: number;
  page: number;
  status?: SessionStatus;
  /** Only one subscription's period sessions (its invoices). */
  subscriptionId?: string;
  now: Date;
}

/** A page of the merchant's sessions, newest first; the status filter honours computed expiry. */
export async function listMerchantSessions(
  db: Db,
  { merchantId, limit, page, status, subscriptionId, now }: ListMerchantSessionsParameters,
): Promise<{ rows: SessionRow[]; total: number }> {
  let query = db.selectFrom('sessions').where('merchant_id', '=', merchantId);
  if (subscriptionId) query = query.where('subscription_id', '=', subscriptionId);
  if (status === 'expired') {
    query = query.where((eb) =>
      eb.or([
        eb('status', '=', 'expired'),
        eb.and([eb('status', '=', 'awaiting_payment'), eb('expires_at', '<=', now)]),
      ]),
    );
  } else if (status === 'awaiting_payment') {
    query = query.where('status', '=', 'awaiting_payment').where('expires_at', '>', now);
  } else if (status) {
    query = query.where('status', '=', status);
  }
  const [rows, count] = await Promise.all([
    query
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(limit)
      .offset((page - 1) * limit)
      .execute(),
    query.select(sql<string>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

export async function markWorkflowStarted(db: Db, id: string): Promise<void> {
  await db.updateTable('sessions').set({ workflow_started_at: new Date() }).where('id', '=', id).execute();
}

/** markWorkflowStarted for several sessions in one statement. */
export async function markWorkflowsStarted(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('sessions')
    .set({ workflow_started_at: new Date() })
    .where('id', 'in', [...ids])
    .execute();
}

/** Sessions created more than `olderThanSec` ago whose workflow was never started (a crash between commit and start). */
export async function findSessionsWithoutWorkflow(
  db: Db,
  { olderThanSec, limit }: { olderThanSec: number; limit: number },
): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('workflow_started_at', 'is', null)
    .where('created_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanSec})`)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/**
 * awaiting_payment → expired, with its event in the same transaction: `session.underpaid` (with what
 * arrived before expiry) when a partial deposit was recorded, else `session.expired`. A no-op for a
 * session that moved on. Returns whether it changed.
 */
export async function expireSession(db: Db, id: string, serialise: SessionEventSerialiser): Promise<boolean> {
  return (await expireSessionWithEvent(db, id, serialise)) !== undefined;
}

/** As `expireSession`, answering the event it stored (undefined when the session had moved on). */
export async function expireSessionWithEvent(
  db: Db,
  id: string,
  serialise: SessionEventSerialiser,
): Promise<EventRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('sessions')
      .set({ status: 'expired', updated_at: new Date() })
      .where('id', '=', id)
      .where('status', '=', 'awaiting_payment')
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    const receivedAmount = await receivedBeforeExpiry(trx, id);
    return storeSessionEvent(
      trx,
      receivedAmount === '0'
        ? { type: 'session.expired', session: row }
        : { type: 'session.underpaid', session: row, receivedAmount },
      serialise,
    );
  });
}

/**
 * confirming or bridging → failed with the reason, and its `session.failed` event (one per failure) in
 * the same transaction. Returns whether it changed (a replay changes nothing and stores no event).
 */
export async function failSession(
  db: Db,
  { id, reason }: { id: string; reason: string },
  serialise: SessionEventSerialiser,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('sessions')
      .set({ status: 'failed', failure_reason: reason, updated_at: new Date() })
      .where('id', '=', id)
      .where('status', 'in', ['confirming', 'bridging'])
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    await storeSessionEvent(trx, { type: 'session.failed', session: row, failureReason: reason }, serialise);
    return true;
  });
}

/** awaiting_payment → confirming with the deposit's facts; idempotent (a replay changes nothing). */
export async function recordSessionDeposit(
  db: Db,
  { id, txHash, chainId, paidAt }: { id: string; txHash: string; chainId: number; paidAt: Date },
): Promise<SessionRow | undefined> {
  return db
    .updateTable('sessions')
    .set({
      status: 'confirming',
      tx_hash: txHash,
      paid_chain_id: chainId,
      paid_at: paidAt,
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('status', '=', 'awaiting_payment')
    .returningAll()
    .executeTakeFirst();
}

/** Moves a session along the settlement states; `from` guards against racing or replayed updates. */
export async function transitionSession(
  db: Db,
  {
    id,
    from,
    to,
    failureReason = null,
  }: { id: string; from: SessionStatus[]; to: SessionStatus; failureReason?: string | null },
): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ status: to, failure_reason: failureReason, updated_at: new Date() })
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * retry-forwarder: a failed session, or an expired/completed one holding unsettled deposits, goes back
 * to confirming; a late payment gets its paidAt and txHash now (the first ones are kept).
 */
export async function reopenSessionForSettlement(db: Db, payment: ReopenedPayment): Promise<boolean> {
  const result = await reopenForSettlement(db, payment).executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

interface ReopenedPayment {
  id: string;
  txHash: string;
  chainId: number;
  paidAt: Date;
}

/**
 * The update both reopenings share: back to confirming, keeping the first payment's paidAt and txHash.
 * A completed session is final (SPEC): it is never reopened, so it never sends a second
 * `session.confirming`; funds reaching it late are only swept (migration 2026_11_26_861 refuses the change too).
 */
function reopenForSettlement(db: Db, { id, txHash, chainId, paidAt }: ReopenedPayment) {
  return db
    .updateTable('sessions')
    .set((eb) => ({
      status: 'confirming',
      failure_reason: null,
      paid_at: eb.fn.coalesce('paid_at', eb.val(paidAt)),
      tx_hash: eb.fn.coalesce('tx_hash', eb.val(txHash)),
      paid_chain_id: eb.fn.coalesce('paid_chain_id', eb.val(chainId)),
      updated_at: new Date(),
    }))
    .where('id', '=', id)
    .where('status', 'in', ['failed', 'expired', 'awaiting_payment']);
}

/**
 * An option counts as paid when the transfers into it (on time or late) add up to its amount. Only then
 * may a session be (re)opened for settlement through `confirming` to `completed`; anything less is swept
 * to the payout address without changing the session's status.
 */
function optionPaidInFull(chainId: number, tokenAddress: string) {
  return sql<boolean>`exists (
    select 1 from payment_options o
    where o.session_id = sessions.id and o.chain_id = ${chainId} and lower(o.token_address) = ${tokenAddress.toLowerCase()}
      and (select coalesce(sum(d.amount), 0) from deposits d
           where d.session_id = o.session_id and d.chain_id = o.chain_id and d.token_address = lower(o.token_address)) >= o.amount
  )`;
}

/** Some option's settled flushes (stablecoin in) cover its amount: the condition for `completed`. */
const settlementsCoverAnOption = sql<boolean>`exists (
  select 1 from payment_options o
  where o.session_id = sessions.id
    and (select coalesce(sum(st.amount_in), 0) from settlements st
         where st.session_id = o.session_id and st.chain_id = o.chain_id and st.token_address = lower(o.token_address)) >= o.amount
)`;

/**
 * retry-forwarder for funds an ended session holds: an expired or failed session whose option is paid in full
 * goes back to confirming (like reopenSessionForSettlement); an underpaid or completed one is left as it is.
 * Returns whether it reopened.
 */
export async function reopenPaidSessionForSettlement(
  db: Db,
  payment: ReopenedPayment & { tokenAddress: string },
): Promise<boolean> {
  const result = await reopenForSettlement(db, payment)
    .where(optionPaidInFull(payment.chainId, payment.tokenAddress))
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export type CompleteSessionResult = 'completed' | 'unchanged' | 'not_covered';

/**
 * confirming or bridging → completed, only when the settled flushes of one option cover its amount: an
 * underpaid session is never completed. Its `session.completed` event, with what the merchant received,
 * and, when the session received more than its amount, its `session.overpaid`, are stored in the same
 * transaction. `unchanged` when it was not in those states (a replay).
 */
export async function completeSession(
  db: Db,
  id: string,
  serialise: SessionEventSerialiser,
): Promise<CompleteSessionResult> {
  const completed = await db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('sessions')
      .set({ status: 'completed', failure_reason: null, updated_at: new Date() })
      .where('id', '=', id)
      .where('status', 'in', ['confirming', 'bridging'])
      .where(settlementsCoverAnOption)
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    // Covered flushes exist (the WHERE above), so the settlement's on-chain result is recorded.
    const settlement = (await settlementReceived(trx, id))!;
    await storeSessionEvent(trx, { type: 'session.completed', session: row, settlement }, serialise);
    // More arrived than was asked (issue 41): said once, beside the completion, with the exact amounts.
    const receivedAmount = await receivedAmountOf(trx, id);
    const amount = normaliseDecimal(row.amount);
    if (usdExceeds(receivedAmount, amount)) {
      const overpaidAmount = usdDifference(receivedAmount, amount);
      await storeSessionEvent(
        trx,
        { type: 'session.overpaid', session: row, receivedAmount, overpaidAmount },
        serialise,
      );
    }
    return true;
  });
  if (completed) return 'completed';
  const row = await db.selectFrom('sessions').select('status').where('id', '=', id).executeTakeFirst();
  return row && (row.status === 'confirming' || row.status === 'bridging') ? 'not_covered' : 'unchanged';
}

/** A sweep of an underpaid session failed: keep the reason for operators without changing its status. */
export async function recordSweepFailure(
  db: Db,
  { id, reason }: { id: string; reason: string },
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ failure_reason: reason, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

/** The payout address the session's forwarder on `chainId` binds (its payment options on that chain share it). */
/**
 * The cap of a session that holds an overpayment (`overpayment: "hold"`): its amount in micro-dollars, bound into
 * its capped forwarders; undefined for a session that settles everything (or an unknown one).
 */
export async function findHoldCapMicroUsd(db: Db, sessionId: string): Promise<bigint | undefined> {
  const row = await db
    .selectFrom('sessions')
    .select(['amount', 'overpayment'])
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return row?.overpayment === 'hold' ? toBaseUnits(normaliseDecimal(row.amount), 6) : undefined;
}

export async function findPayoutAddress(
  db: Db,
  { sessionId, chainId }: { sessionId: string; chainId: number },
): Promise<string | undefined> {
  const row = await db
    .selectFrom('payment_options')
    .select('payout_address')
    .where('session_id', '=', sessionId)
    .where('chain_id', '=', chainId)
    .executeTakeFirst();
  return row?.payout_address;
}
