import { sql, type Insertable, type Selectable } from 'kysely';
import { fromBaseUnits, normaliseDecimal } from '../money/baseUnits';
import type { Db } from './client';
import { receivedAmountsOf, usdDifference, usdExceeds } from './receivedAmounts';
import { CANCELABLE_REFUND_STATUSES, RELEASED_REFUND_STATUSES } from './refundStatus';
import type { RefundsTable } from './schema';
import type { SessionRow } from './sessions';

export type RefundRow = Selectable<RefundsTable>;
export type NewRefund = Insertable<RefundsTable>;

/**
 * Refunds of payment sessions (issue 41; docs/service-contract.md "Refunds"). Every read is scoped by merchant and session: another
 * merchant's refund reads as unknown. What a session may still refund is decided under the session's row
 * lock (`lockMerchantSession`), so two refunds created at once never promise more than it received.
 */

/** A session's money as the reads show it: decimal USD strings, exact. */
export interface SessionAmounts {
  /** Every transfer into the session, on time or late (db/receivedAmounts.ts). */
  receivedAmount: string;
  /** What succeeded refunds paid back. */
  refundedAmount: string;
  /** received − every refund that is not failed or canceled (pending ones hold their amount). */
  refundableAmount: string;
}

/** USD held by refunds per session: `refunded` by succeeded ones, `committed` by every live or succeeded one. */
async function refundTotalsOf(
  db: Db,
  sessionIds: readonly string[],
): Promise<Map<string, { refunded: string; committed: string }>> {
  const rows = await db
    .selectFrom('refunds')
    .select([
      'session_id',
      sql<string>`coalesce(sum(amount) filter (where status = 'succeeded'), 0)::text`.as('refunded'),
      sql<string>`coalesce(sum(amount), 0)::text`.as('committed'),
    ])
    .where('session_id', 'in', [...sessionIds])
    .where('status', 'not in', [...RELEASED_REFUND_STATUSES])
    .groupBy('session_id')
    .execute();
  return new Map(
    rows.map((row) => [
      row.session_id,
      { refunded: normaliseDecimal(row.refunded), committed: normaliseDecimal(row.committed) },
    ]),
  );
}

/** Each session's received, refunded and refundable amounts. */
export async function sessionAmountsOf(
  db: Db,
  sessionIds: readonly string[],
): Promise<Map<string, SessionAmounts>> {
  if (sessionIds.length === 0) return new Map();
  const [received, refunds] = await Promise.all([
    receivedAmountsOf(db, sessionIds),
    refundTotalsOf(db, sessionIds),
  ]);
  return new Map(
    sessionIds.map((id) => {
      const receivedAmount = received.get(id)!;
      const { refunded, committed } = refunds.get(id) ?? { refunded: '0', committed: '0' };
      const refundableAmount = usdExceeds(receivedAmount, committed)
        ? usdDifference(receivedAmount, committed)
        : '0';
      return [id, { receivedAmount, refundedAmount: refunded, refundableAmount }];
    }),
  );
}

export async function sessionAmountOf(db: Db, sessionId: string): Promise<SessionAmounts> {
  return (await sessionAmountsOf(db, [sessionId])).get(sessionId)!;
}

/**
 * The merchant's session, its row locked until the transaction ends: every refund creation of a session
 * queues here, so each one reads the refunds committed before it. Another merchant's id reads as unknown.
 */
export async function lockMerchantSession(
  trx: Db,
  merchantId: string,
  sessionId: string,
): Promise<SessionRow | undefined> {
  return trx
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', sessionId)
    .where('merchant_id', '=', merchantId)
    .forUpdate()
    .executeTakeFirst();
}

/** A payment option of the session with what its deposits brought, per (chain, token). */
export interface RefundableOption {
  chainId: number;
  symbol: string;
  tokenAddress: string;
  decimals: number;
  /** The option's forwarder (lower-case) and the payout address bound into it: who signs a forwarder refund. */
  depositAddress: string;
  payoutAddress: string;
  /**
   * Base units received and not swept yet, less what forwarder refunds hold from it (never below 0); 0 while a
   * flush of the option is in flight.
   */
  unsweptUnits: bigint;
  /** Block of the option's first deposit, or null when nothing arrived there. */
  firstDepositBlock: bigint | null;
}

/** Every payment option of the session, with its unswept funds (what a forwarder refund can return). */
export async function refundableOptionsOf(trx: Db, sessionId: string): Promise<RefundableOption[]> {
  const options = await trx
    .selectFrom('payment_options as o')
    .select([
      'o.chain_id',
      'o.symbol',
      'o.token_address',
      'o.decimals',
      'o.deposit_address',
      'o.payout_address',
      (eb) =>
        eb
          .selectFrom('deposits as d')
          .select(sql<string>`coalesce(sum(d.amount) filter (where d.settled_at is null), 0)::text`.as('u'))
          .whereRef('d.session_id', '=', 'o.session_id')
          .whereRef('d.chain_id', '=', 'o.chain_id')
          .where((inner) => inner('d.token_address', '=', inner.fn<string>('lower', ['o.token_address'])))
          .as('unswept'),
      // A held overpayment is the remainder of deposits a capped flush marked swept: there, what is unswept is
      // everything deposited less what the flushes took in (docs/decisions.md "Sessions: overpayment hold").
      (eb) =>
        eb
          .selectFrom('deposits as d')
          .select(sql<string>`coalesce(sum(d.amount), 0)::text`.as('a'))
          .whereRef('d.session_id', '=', 'o.session_id')
          .whereRef('d.chain_id', '=', 'o.chain_id')
          .where((inner) => inner('d.token_address', '=', inner.fn<string>('lower', ['o.token_address'])))
          .as('deposited'),
      (eb) =>
        eb
          .selectFrom('settlements as f')
          .select(sql<string>`coalesce(sum(f.amount_in), 0)::text`.as('t'))
          .whereRef('f.session_id', '=', 'o.session_id')
          .whereRef('f.chain_id', '=', 'o.chain_id')
          .where('f.usde_amount', 'is not', null)
          .where((inner) => inner('f.token_address', '=', inner.fn<string>('lower', ['o.token_address'])))
          .as('flushed'),
      (eb) =>
        eb
          .selectFrom('sessions as s')
          .select(sql<boolean>`s.overpayment = 'hold'`.as('h'))
          .whereRef('s.id', '=', 'o.session_id')
          .as('holds'),
      (eb) =>
        eb
          .selectFrom('deposits as d')
          .select(sql<string | null>`min(d.block_number)::text`.as('b'))
          .whereRef('d.session_id', '=', 'o.session_id')
          .whereRef('d.chain_id', '=', 'o.chain_id')
          .where((inner) => inner('d.token_address', '=', inner.fn<string>('lower', ['o.token_address'])))
          .as('first_block'),
      (eb) =>
        eb
          .selectFrom('refunds as r')
          .select(sql<string>`coalesce(sum(r.amount_units), 0)::text`.as('h'))
          .whereRef('r.session_id', '=', 'o.session_id')
          .whereRef('r.chain_id', '=', 'o.chain_id')
          .where('r.source', '=', 'forwarder')
          .where('r.status', 'not in', [...RELEASED_REFUND_STATUSES])
          .where((inner) => inner('r.token_address', '=', inner.fn<string>('lower', ['o.token_address'])))
          .as('held'),
      // A flush in flight sweeps the forwarder: nothing of it is promised to a refund meanwhile.
      (eb) =>
        eb
          .selectFrom('settlements as f')
          .select(sql<boolean>`count(*) > 0`.as('f'))
          .whereRef('f.session_id', '=', 'o.session_id')
          .whereRef('f.chain_id', '=', 'o.chain_id')
          .where('f.usde_amount', 'is', null)
          .where((inner) => inner('f.token_address', '=', inner.fn<string>('lower', ['o.token_address'])))
          .as('flushing'),
    ])
    .where('o.session_id', '=', sessionId)
    .orderBy('o.chain_id')
    .orderBy('o.symbol')
    .execute();
  return options.map((option) => {
    const notFlushed = option.holds
      ? BigInt(option.deposited ?? '0') - BigInt(option.flushed ?? '0')
      : BigInt(option.unswept ?? '0');
    const unswept = option.flushing ? 0n : notFlushed - BigInt(option.held ?? '0');
    return {
      chainId: option.chain_id,
      symbol: option.symbol,
      tokenAddress: option.token_address.toLowerCase(),
      decimals: option.decimals,
      depositAddress: option.deposit_address.toLowerCase(),
      payoutAddress: option.payout_address,
      unsweptUnits: unswept > 0n ? unswept : 0n,
      firstDepositBlock: option.first_block === null ? null : BigInt(option.first_block),
    };
  });
}

/** Whether a refund of the merchant carries this Idempotency-Key already. */
export async function hasRefundWithIdempotencyKey(db: Db, merchantId: string, key: string): Promise<boolean> {
  const row = await db
    .selectFrom('refunds')
    .select('id')
    .where('merchant_id', '=', merchantId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row !== undefined;
}

/** Inserts the refund; undefined when a refund of the merchant already carries its idempotency key. */
export async function insertRefund(trx: Db, refund: NewRefund): Promise<RefundRow | undefined> {
  return trx
    .insertInto('refunds')
    .values(refund)
    .onConflict((conflict) => conflict.columns(['merchant_id', 'idempotency_key']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** The session's refunds, newest first (the caller has checked the session is the merchant's). */
export async function listSessionRefunds(
  db: Db,
  merchantId: string,
  sessionId: string,
): Promise<RefundRow[]> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('session_id', '=', sessionId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function findMerchantRefund(
  db: Db,
  { merchantId, sessionId, refundId }: { merchantId: string; sessionId: string; refundId: string },
): Promise<RefundRow | undefined> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('id', '=', refundId)
    .where('session_id', '=', sessionId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/**
 * Cancels the refund if nothing has moved (a conditional write: a refund that reached `processing` in the
 * meantime is left alone). Returns the row as it is afterwards, or undefined when it is not the merchant's.
 */
export async function cancelRefund(
  db: Db,
  ids: { merchantId: string; sessionId: string; refundId: string },
  now: Date,
): Promise<RefundRow | undefined> {
  const canceled = await db
    .updateTable('refunds')
    .set({ status: 'canceled', canceled_at: now, claim_token_hash: null, updated_at: now })
    .where('id', '=', ids.refundId)
    .where('session_id', '=', ids.sessionId)
    .where('merchant_id', '=', ids.merchantId)
    .where('status', 'in', [...CANCELABLE_REFUND_STATUSES])
    .returningAll()
    .executeTakeFirst();
  return canceled ?? findMerchantRefund(db, ids);
}

/**
 * A new claim token for a refund still waiting for its address through a claim link (the old link stops
 * working). Returns false when the refund has its address already, or has no claim link.
 */
export async function replaceClaimToken(
  db: Db,
  { refundId, claimTokenHash, now }: { refundId: string; claimTokenHash: string; now: Date },
): Promise<boolean> {
  const replaced = await db
    .updateTable('refunds')
    .set({ claim_token_hash: claimTokenHash, updated_at: now })
    .where('id', '=', refundId)
    .where('status', '=', 'awaiting_address')
    .where('claim_token_hash', 'is not', null)
    .executeTakeFirst();
  return replaced.numUpdatedRows === 1n;
}

/** The largest amount with at most 6 decimals not above `usd` (decimal USD): a default refund amount. */
export function microUsdFloorOf(usd: string): string {
  const [whole, fraction = ''] = usd.split('.');
  return fromBaseUnits(BigInt(whole! + fraction.slice(0, 6).padEnd(6, '0')), 6);
}

export async function findRefundById(db: Db, id: string): Promise<RefundRow | undefined> {
  return db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The refund another refund's report already names this transaction for, if any (one transaction pays one refund). */
export async function findRefundPaidBy(
  db: Db,
  { chainId, txHash }: { chainId: number; txHash: string },
): Promise<RefundRow | undefined> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where((eb) => eb(eb.fn<string>('lower', ['tx_hash']), '=', txHash.toLowerCase()))
    .executeTakeFirst();
}

/**
 * A merchant-paid refund waiting for its payment takes the reported (and verified) transaction: a conditional
 * write, so a concurrent cancel or a second report finds it changed. Undefined when it was not waiting, or
 * when another refund took this transaction first (the unique index `refunds_tx_once`).
 */
export async function markRefundProcessing(
  db: Db,
  { refundId, txHash, now }: { refundId: string; txHash: string; now: Date },
): Promise<RefundRow | undefined> {
  try {
    return await db
      .updateTable('refunds')
      .set({ status: 'processing', tx_hash: txHash.toLowerCase(), updated_at: now })
      .where('id', '=', refundId)
      .where('status', '=', 'awaiting_payment')
      .where('source', '=', 'merchant')
      .returningAll()
      .executeTakeFirst();
  } catch (error) {
    if ((error as { constraint?: string }).constraint === 'refunds_tx_once') return undefined;
    throw error;
  }
}

/**
 * Ends a processing refund, `succeeded` or `failed`, and stores its event in the same transaction (a replay
 * finds it ended and answers the stored event). `storeEvent` writes the event of the ended row.
 */
export async function finishRefund(
  db: Db,
  {
    refundId,
    outcome,
    failureReason,
    now,
  }: { refundId: string; outcome: 'succeeded' | 'failed'; failureReason?: string; now: Date },
  storeEvent: (trx: Db, row: RefundRow) => Promise<{ id: string }>,
): Promise<{ row: RefundRow; eventId: string } | undefined> {
  return db.transaction().execute(async (trx) => {
    const ended = await trx
      .updateTable('refunds')
      .set({
        status: outcome,
        succeeded_at: outcome === 'succeeded' ? now : null,
        failure_reason: failureReason ?? null,
        updated_at: now,
      })
      .where('id', '=', refundId)
      .where('status', '=', 'processing')
      .returningAll()
      .executeTakeFirst();
    const row = ended ?? (await findRefundById(trx, refundId));
    if (!row || row.status !== outcome) return undefined;
    return { row, eventId: (await storeEvent(trx, row)).id };
  });
}

/** The refund a claim link names (by its token's hash), with its session's merchant name, if any. */
export async function findRefundByClaimTokenHash(
  db: Db,
  claimTokenHash: string,
): Promise<(RefundRow & { merchant_name: string | null }) | undefined> {
  return db
    .selectFrom('refunds as r')
    .innerJoin('sessions as s', 's.id', 'r.session_id')
    .selectAll('r')
    .select('s.merchant_name')
    .where('r.claim_token_hash', '=', claimTokenHash)
    .executeTakeFirst();
}

/**
 * The payer's one answer to a claim link: the address, and with it the chain and token the refund pays in.
 * A conditional write (still awaiting its address, the link not expired), so a second or concurrent
 * submission changes nothing. Undefined when the refund no longer waits for an address by this link.
 */
export async function recordClaimedAddress(
  db: Db,
  {
    claimTokenHash,
    address,
    option,
    amountUnits,
    status,
    now,
  }: {
    claimTokenHash: string;
    address: string;
    option: {
      chainId: number;
      tokenAddress: string;
      decimals: number;
      depositAddress: string;
      payoutAddress: string;
    };
    amountUnits: string;
    status: 'awaiting_authorization' | 'awaiting_payment';
    now: Date;
  },
): Promise<RefundRow | undefined> {
  return db
    .updateTable('refunds')
    .set({
      address,
      chain_id: option.chainId,
      token_address: option.tokenAddress.toLowerCase(),
      token_decimals: option.decimals,
      amount_units: amountUnits,
      ...(status === 'awaiting_authorization' && {
        forwarder_address: option.depositAddress.toLowerCase(),
        payout_address: option.payoutAddress,
      }),
      status,
      updated_at: now,
    })
    .where('claim_token_hash', '=', claimTokenHash)
    .where('status', '=', 'awaiting_address')
    .where('claim_expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Base units of `token` that forwarder refunds authorized from this forwarder still have to take and have
 * no relay transaction yet (a relayed one has left the balance, or is pending in it): what the forwarder's
 * balance must still cover besides a new authorization.
 */
export async function unrelayedForwarderRefundUnits(
  db: Db,
  { forwarder, token }: { forwarder: string; token: string },
): Promise<bigint> {
  const row = await db
    .selectFrom('refunds')
    .select(sql<string>`coalesce(sum(amount_units), 0)::text`.as('units'))
    .where('source', '=', 'forwarder')
    .where('status', '=', 'processing')
    .where('tx_hash', 'is', null)
    .where('forwarder_address', '=', forwarder.toLowerCase())
    .where('token_address', '=', token.toLowerCase())
    .executeTakeFirstOrThrow();
  return BigInt(row.units);
}

/**
 * Live forwarder refunds of this forwarder and token (waiting for their address or authorization, or
 * processing): a flush must leave their money where it is.
 */
export async function liveForwarderRefundUnits(
  db: Db,
  { sessionId, chainId, token }: { sessionId: string; chainId: number; token: string },
): Promise<bigint> {
  const row = await db
    .selectFrom('refunds')
    .select(sql<string>`coalesce(sum(amount_units), 0)::text`.as('units'))
    .where('source', '=', 'forwarder')
    .where('session_id', '=', sessionId)
    .where('chain_id', '=', chainId)
    .where('token_address', '=', token.toLowerCase())
    .where('status', 'in', ['awaiting_address', 'awaiting_authorization', 'processing'])
    .executeTakeFirstOrThrow();
  return BigInt(row.units);
}

/**
 * The payout address's accepted authorization: a forwarder refund awaiting it becomes `processing` with the
 * signature stored (a conditional write: of two authorizations racing, or a cancel, one wins). Undefined when
 * the refund was no longer waiting for its authorization.
 */
export async function markRefundAuthorized(
  db: Db,
  {
    refundId,
    signature,
    gasPricing,
    now,
  }: {
    refundId: string;
    signature: string;
    /** Mainnets: the ETH/USD price (decimal) and markup the relay's gas is charged at. */
    gasPricing?: { ethUsdPrice: string; markupBps: number };
    now: Date;
  },
): Promise<RefundRow | undefined> {
  return db
    .updateTable('refunds')
    .set({
      status: 'processing',
      authorization_signature: signature,
      relay_eth_usd_price: gasPricing?.ethUsdPrice ?? null,
      relay_markup_bps: gasPricing?.markupBps ?? null,
      updated_at: now,
    })
    .where('id', '=', refundId)
    .where('status', '=', 'awaiting_authorization')
    .where('source', '=', 'forwarder')
    .returningAll()
    .executeTakeFirst();
}

/**
 * Records the relay transaction, signed with the operator's nonce, before it is broadcast (under the
 * operator's lock): a retry after a crash finds it and brings this same transaction to a receipt. Undefined
 * when a relay is already recorded (another attempt got there first).
 */
export async function recordRefundRelaySigned(
  db: Db,
  {
    refundId,
    rawTransaction,
    txHash,
    nonce,
    now,
  }: { refundId: string; rawTransaction: string; txHash: string; nonce: number; now: Date },
): Promise<RefundRow | undefined> {
  return db
    .updateTable('refunds')
    .set({
      relay_raw_tx: rawTransaction,
      tx_hash: txHash.toLowerCase(),
      relay_nonce: String(nonce),
      updated_at: now,
    })
    .where('id', '=', refundId)
    .where('status', '=', 'processing')
    .where('source', '=', 'forwarder')
    .where('tx_hash', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** A recorded relay whose nonce another transaction took (it never happened): forgotten, so it is relayed again. */
export async function discardRefundRelay(
  db: Db,
  { refundId, txHash }: { refundId: string; txHash: string },
): Promise<void> {
  await db
    .updateTable('refunds')
    .set({ relay_raw_tx: null, tx_hash: null, relay_nonce: null })
    .where('id', '=', refundId)
    .where('status', '=', 'processing')
    .where('tx_hash', '=', txHash.toLowerCase())
    .execute();
}

/** A relay found mined by its Refunded event (relayed by someone else, or recorded under a lost answer). */
export async function recordRefundRelayFound(
  db: Db,
  { refundId, txHash, now }: { refundId: string; txHash: string; now: Date },
): Promise<void> {
  await db
    .updateTable('refunds')
    .set({ tx_hash: txHash.toLowerCase(), updated_at: now })
    .where('id', '=', refundId)
    .where('status', '=', 'processing')
    .where('tx_hash', 'is', null)
    .execute();
}

/** Whether a forwarder refund of the session is live (waiting for its address or authorization, or processing). */
export async function hasLiveForwarderRefund(db: Db, sessionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('refunds')
    .select('id')
    .where('session_id', '=', sessionId)
    .where('source', '=', 'forwarder')
    .where('status', 'in', ['awaiting_address', 'awaiting_authorization', 'processing'])
    .executeTakeFirst();
  return row !== undefined;
}
