import { fromBaseUnits, normaliseDecimal } from '../money/baseUnits';
import { microUsdToFixed6, toMicroUsdRoundingDown } from '../money/microUsd';
import type { Db } from './client';
import {
  findEventById,
  insertLateDepositEventOnce,
  insertSessionEventOnce,
  REPEATABLE_SESSION_EVENT_TYPE,
  type EventRow,
} from './events';
import { receivedAmountOf } from './receivedAmounts';
import type { SessionsTable } from './schema';
import type { SessionStatus } from './sessionStatus';
import type { Selectable } from 'kysely';

/**
 * The session lifecycle events (docs/decisions.md "Session lifecycle events (issue 29)"), each written by the status change that causes it, inside
 * that change's transaction (db/sessions.ts): an event exists exactly when its status change committed.
 */

export type SessionRow = Selectable<SessionsTable>;

const SUSDE_DECIMALS = 18;

/** What the merchant received (`session.completed`): read from the settlement's on-chain result. */
export interface SettlementReceived {
  /** The chain the sUSDe was staked on for the merchant (the settlement chain). */
  chainId: number;
  /** The transaction that staked it: the flush, or the bridge's staking call after a layer-2 flush. */
  txHash: string;
  asset: 'sUSDe';
  /** USDe staked, decimal string in whole tokens (18 decimals, exact), e.g. "2.994". */
  assetAmount: string;
  /** sUSDe shares minted to the merchant, decimal string in whole shares (18 decimals, exact). */
  shares: string;
}

/** A lifecycle event as its status change knows it: the type, the changed row and the type's facts. */
export type SessionLifecycleFacts =
  | { type: 'session.expired'; session: SessionRow }
  | { type: 'session.underpaid'; session: SessionRow; receivedAmount: string }
  | { type: 'session.failed'; session: SessionRow; failureReason: string }
  | { type: 'session.completed'; session: SessionRow; settlement: SettlementReceived }
  | { type: 'session.overpaid'; session: SessionRow; receivedAmount: string; overpaidAmount: string }
  | {
      type: 'session.paid_late';
      session: SessionRow;
      /** The status a read shows now (never `pending`). */
      reportedStatus: Exclude<SessionStatus, 'pending'>;
      receivedAmount: string;
      txHash: string;
    };

/** An event as stored: its id, when it was made, and its body serialised once. */
export interface SerialisedEvent {
  id: string;
  createdAt: Date;
  payload: string;
}

/**
 * Makes a lifecycle event's id and body: the wire shape is the webhooks' rule
 * (webhooks/sessionLifecycleEvents.ts), passed in by the caller of the status change.
 */
export type SessionEventSerialiser = (facts: SessionLifecycleFacts) => SerialisedEvent;

/**
 * Stores the session's event of this type, serialised once by `serialise`. A type other than
 * `session.failed` is stored at most once per session (the partial unique index `events_session_type_once`):
 * a second call returns the first event, id and bytes unchanged.
 */
export async function storeSessionEvent(
  trx: Db,
  facts: SessionLifecycleFacts,
  serialise: SessionEventSerialiser,
): Promise<EventRow> {
  const { id, createdAt, payload } = serialise(facts);
  const { session, type } = facts;
  const row = {
    id,
    type,
    merchant_id: session.merchant_id,
    session_id: session.id,
    payload,
    created_at: createdAt,
  };
  if (type === REPEATABLE_SESSION_EVENT_TYPE)
    return trx.insertInto('events').values(row).returningAll().executeTakeFirstOrThrow();
  return insertSessionEventOnce(trx, {
    id,
    type,
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
  types: readonly string[],
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
export async function settlementReceived(
  trx: Db,
  sessionId: string,
): Promise<SettlementReceived | undefined> {
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
  serialise: SessionEventSerialiser,
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
  const { id, createdAt, payload } = serialise({
    type: 'session.paid_late',
    session: found,
    reportedStatus: reportedStatusOf(found, new Date()),
    receivedAmount: await receivedAmountOf(db, found.id),
    txHash,
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
