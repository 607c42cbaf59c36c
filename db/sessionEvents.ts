import { randomUUID } from 'node:crypto';
import { fromBaseUnits, normaliseDecimal, toMicroUsdRoundingDown } from '../chain/tokenAmount';
import { microUsdToFixed6 } from '../billing/gasChargeAmount';
import {
  newEventId,
  REPEATABLE_SESSION_EVENT_TYPE,
  serialiseSessionEvent,
  type EventSession,
  type EventSettlement,
  type SessionEvent,
  type SessionEventType,
} from '../webhooks/events';
import type { Db } from './client';
import { findEventById, insertLateDepositEventOnce, insertSessionEventOnce, type EventRow } from './events';
import { receivedAmountOf } from './receivedAmounts';
import type { SessionsTable } from './schema';
import type { SessionStatus } from './sessionStatus';
import type { Selectable } from 'kysely';

/**
 * The session lifecycle events (DESIGN §8.3), each written by the status change that causes it, inside
 * that change's transaction (db/sessions.ts): an event exists exactly when its status change committed.
 */

type SessionRow = Selectable<SessionsTable>;

const SUSDE_DECIMALS = 18;

/** `data.session`: SPEC's session fields with the status the change just wrote. */
export function eventSessionOf<Status extends string>(row: SessionRow, status: Status): EventSession<Status> {
  return {
    id: row.id,
    merchantName: row.merchant_name,
    amount: normaliseDecimal(row.amount),
    status,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    paidAt: row.paid_at?.toISOString() ?? null,
    txHash: row.tx_hash,
  };
}

type EventBody = Omit<SessionEvent, 'id' | 'createdAt'>;

/**
 * Stores the session's event of this type, serialised once. A type other than `session.failed` is stored
 * at most once per session (the partial unique index `events_session_type_once`): a second call returns
 * the first event, id and bytes unchanged.
 */
export async function storeSessionEvent(
  trx: Db,
  session: Pick<SessionRow, 'id' | 'merchant_id'>,
  body: EventBody,
): Promise<EventRow> {
  const id = newEventId(randomUUID());
  const createdAt = new Date();
  const payload = serialiseSessionEvent({ ...body, id, createdAt: createdAt.toISOString() } as SessionEvent);
  const row = {
    id,
    type: body.type,
    merchant_id: session.merchant_id,
    session_id: session.id,
    payload,
    created_at: createdAt,
  };
  if (body.type === REPEATABLE_SESSION_EVENT_TYPE)
    return trx.insertInto('events').values(row).returningAll().executeTakeFirstOrThrow();
  return insertSessionEventOnce(trx, {
    id,
    type: body.type,
    merchantId: session.merchant_id,
    sessionId: session.id,
    payload,
    createdAt,
  });
}

/** The session's latest event of one of these types (a retried status change finds the one it stored). */
export async function findLatestSessionEventOfType(
  db: Db,
  sessionId: string,
  types: readonly SessionEventType[],
): Promise<EventRow | undefined> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('type', 'in', [...types])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * What arrived before expiry, in decimal USD: the session's on-time (`accepted`) deposits, each
 * stablecoin at par, rounded down to the micro-dollar; "0" when nothing arrived.
 */
export async function receivedBeforeExpiry(trx: Db, sessionId: string): Promise<string> {
  const rows = await trx
    .selectFrom('deposits as d')
    .innerJoin('payment_options as o', (join) =>
      join
        .onRef('o.session_id', '=', 'd.session_id')
        .onRef('o.chain_id', '=', 'd.chain_id')
        .on((eb) => eb(eb.fn('lower', ['o.token_address']), '=', eb.ref('d.token_address'))),
    )
    .select(['d.amount', 'o.decimals'])
    .where('d.session_id', '=', sessionId)
    .where('d.kind', '=', 'accepted')
    .execute();
  const unitsByDecimals = new Map<number, bigint>();
  for (const row of rows)
    unitsByDecimals.set(row.decimals, (unitsByDecimals.get(row.decimals) ?? 0n) + BigInt(row.amount));
  let micro = 0n;
  for (const [decimals, units] of unitsByDecimals) micro += toMicroUsdRoundingDown(units, decimals);
  return normaliseDecimal(microUsdToFixed6(micro));
}

/**
 * What the merchant received, from the recorded on-chain results: the sUSDe shares and the USDe staked
 * by the session's settlements on the chain of the latest delivery, and that delivery's transaction.
 * Undefined before any flush has been recorded.
 */
export async function settlementReceived(trx: Db, sessionId: string): Promise<EventSettlement | undefined> {
  const rows = await trx
    .selectFrom('settlements')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('usde_amount', 'is not', null)
    .orderBy('delivered_at', (ob) => ob.asc().nullsFirst())
    .orderBy('created_at')
    .execute();
  const delivered = rows.map((row) => ({
    // Rows settled before the delivery columns existed: a staked flush delivered on its own chain.
    chainId: row.delivery_chain_id ?? row.chain_id,
    txHash: row.delivery_tx_hash ?? row.flush_tx_hash!,
    usde: BigInt(row.delivered_usde ?? row.usde_amount!),
    shares: BigInt(row.shares ?? 0),
  }));
  const latest = delivered.at(-1);
  if (!latest) return undefined;
  const onChain = delivered.filter((row) => row.chainId === latest.chainId);
  return {
    chainId: latest.chainId,
    txHash: latest.txHash,
    asset: 'sUSDe',
    assetAmount: fromBaseUnits(
      onChain.reduce((sum, row) => sum + row.usde, 0n),
      SUSDE_DECIMALS,
    ),
    shares: fromBaseUnits(
      onChain.reduce((sum, row) => sum + row.shares, 0n),
      SUSDE_DECIMALS,
    ),
  };
}

/** One transfer the deposit monitor recorded, by its place on the chain. */
export interface RecordedTransfer {
  chainId: number;
  txHash: string;
  logIndex: number;
}

/**
 * Stores the `session.paid_late` event of a transfer the monitor recorded that was mined after its
 * session's expiry (issue 41), once per transfer: a second call returns the first event, id and bytes
 * unchanged. `receivedAmount` is what the session has received by then, this transfer included.
 * Undefined when no such transfer was recorded.
 */
export async function storeLateDepositEvent(
  db: Db,
  { chainId, txHash, logIndex }: RecordedTransfer,
): Promise<EventRow | undefined> {
  const found = await db
    .selectFrom('deposits as d')
    .innerJoin('sessions as s', 's.id', 'd.session_id')
    .leftJoin('events as e', 'e.deposit_id', 'd.id')
    .selectAll('s')
    .select(['d.id as deposit_id', 'e.id as event_id'])
    .where('d.chain_id', '=', chainId)
    .where('d.tx_hash', '=', txHash)
    .where('d.log_index', '=', logIndex)
    .executeTakeFirst();
  if (!found) return undefined;
  if (found.event_id) return findEventById(db, found.event_id);
  const id = newEventId(randomUUID());
  const createdAt = new Date();
  const payload = serialiseSessionEvent({
    id,
    type: 'session.paid_late',
    createdAt: createdAt.toISOString(),
    data: {
      session: eventSessionOf(found, reportedStatusOf(found, createdAt)),
      receivedAmount: await receivedAmountOf(db, found.id),
      txHash,
    },
  });
  return insertLateDepositEventOnce(db, {
    id,
    type: 'session.paid_late',
    merchantId: found.merchant_id,
    sessionId: found.id,
    depositId: found.deposit_id,
    payload,
    createdAt,
  });
}

/** The status a read shows (SPEC rule 1: unpaid past expiry reads `expired`; `pending` is never shown then). */
function reportedStatusOf(row: SessionRow, now: Date): Exclude<SessionStatus, 'pending'> {
  if (row.status !== 'pending' && row.status !== 'awaiting_payment') return row.status;
  return row.expires_at.getTime() <= now.getTime() ? 'expired' : 'awaiting_payment';
}
