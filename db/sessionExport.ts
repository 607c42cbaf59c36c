import { fromBaseUnits, normaliseDecimal, toBaseUnits } from '../money/baseUnits';
import type { Db } from './client';
import { sumAtPar } from './receivedAmounts';
import type { SessionRow } from './sessions';

/**
 * The payments export (issue 41): one merchant's sessions created in a time range, read in keyset pages
 * of (created_at, id) through the (merchant_id, created_at) index, each page with its sessions' deposits,
 * settlements and refunds. A caller writes a page before the next is read, so a year of sessions never sits in
 * memory: at most one page does.
 */

const SUSDE_DECIMALS = 18;
/** Refund amounts are stored with at most 6 decimals (numeric(20,6)). */
const USD_DECIMALS = 6;

export interface SessionExportRow {
  session: SessionRow;
  /** Every transfer into the session, on time or late, in decimal USD at par, exact. */
  receivedAmount: string;
  /** The chains and token symbols its deposits arrived on (the paid chain first), distinct. */
  chainIds: number[];
  tokens: string[];
  /** Its deposits' transactions, in chain order (block, log), distinct. */
  depositTxHashes: string[];
  /** The transactions that staked sUSDe for the merchant (the flush, or the bridge's staking call). */
  settlementTxHashes: string[];
  /** sUSDe shares minted to the merchant by its settlements, in whole shares (18 decimals, exact). */
  susdeShares: string;
  /** What its succeeded refunds paid back, decimal USD, exact. */
  refundedAmount: string;
  /** Every refund of the session, oldest first: `<id>:<status>:<amount>:<txHash or empty>`. */
  refunds: string[];
}

export interface SessionExportFilter {
  merchantId: string;
  from: Date;
  toExclusive: Date;
}

/** Pages of the merchant's sessions created in [from, toExclusive), oldest first; the last may be short. */
export async function* sessionExportPages(
  db: Db,
  filter: SessionExportFilter,
  pageSize = 500,
): AsyncGenerator<SessionExportRow[]> {
  let after: { createdAt: Date; id: string } | undefined;
  for (;;) {
    const sessions = await sessionPage(db, filter, after, pageSize);
    if (sessions.length > 0) yield await withPayments(db, sessions);
    if (sessions.length < pageSize) return;
    const last = sessions.at(-1)!;
    after = { createdAt: last.created_at, id: last.id };
  }
}

function sessionPage(
  db: Db,
  { merchantId, from, toExclusive }: SessionExportFilter,
  after: { createdAt: Date; id: string } | undefined,
  pageSize: number,
): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', from)
    .where('created_at', '<', toExclusive)
    .$if(after !== undefined, (query) =>
      query.where((eb) =>
        eb.or([
          eb('created_at', '>', after!.createdAt),
          eb.and([eb('created_at', '=', after!.createdAt), eb('id', '>', after!.id)]),
        ]),
      ),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(pageSize)
    .execute();
}

/** The page's sessions with their deposits, settlements and refunds: three queries per page, whatever its size. */
async function withPayments(db: Db, sessions: SessionRow[]): Promise<SessionExportRow[]> {
  const ids = sessions.map((session) => session.id);
  const [deposits, settlements, refunds] = await Promise.all([
    db
      .selectFrom('deposits as d')
      .innerJoin('payment_options as o', (join) =>
        join
          .onRef('o.session_id', '=', 'd.session_id')
          .onRef('o.chain_id', '=', 'd.chain_id')
          .on((eb) => eb(eb.fn('lower', ['o.token_address']), '=', eb.ref('d.token_address'))),
      )
      .select(['d.session_id', 'd.chain_id', 'd.amount', 'd.tx_hash', 'o.decimals', 'o.symbol'])
      .where('d.session_id', 'in', ids)
      .orderBy('d.chain_id')
      .orderBy('d.block_number')
      .orderBy('d.log_index')
      .execute(),
    db
      .selectFrom('settlements')
      .select(['session_id', 'delivery_tx_hash', 'flush_tx_hash', 'shares', 'usde_amount'])
      .where('session_id', 'in', ids)
      .where('usde_amount', 'is not', null)
      .orderBy('created_at')
      .execute(),
    db
      .selectFrom('refunds')
      .select(['session_id', 'id', 'status', 'amount', 'tx_hash'])
      .where('session_id', 'in', ids)
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
  ]);
  return sessions.map((session) => {
    const own = deposits.filter((deposit) => deposit.session_id === session.id);
    const settled = settlements.filter((settlement) => settlement.session_id === session.id);
    const refunded = refunds.filter((refund) => refund.session_id === session.id);
    const chainIds = distinct([
      ...(session.paid_chain_id !== null ? [session.paid_chain_id] : []),
      ...own.map((deposit) => deposit.chain_id),
    ]);
    return {
      session,
      receivedAmount: sumAtPar(own),
      chainIds,
      tokens: distinct(own.map((deposit) => deposit.symbol)),
      depositTxHashes: distinct(own.map((deposit) => deposit.tx_hash)),
      settlementTxHashes: distinct(
        settled.map((settlement) => settlement.delivery_tx_hash ?? settlement.flush_tx_hash!),
      ),
      susdeShares: fromBaseUnits(
        settled.reduce((sum, settlement) => sum + BigInt(settlement.shares ?? 0), 0n),
        SUSDE_DECIMALS,
      ),
      refundedAmount: fromBaseUnits(
        refunded
          .filter((refund) => refund.status === 'succeeded')
          .reduce((sum, refund) => sum + toBaseUnits(normaliseDecimal(refund.amount), USD_DECIMALS), 0n),
        USD_DECIMALS,
      ),
      refunds: refunded.map(
        (refund) =>
          `${refund.id}:${refund.status}:${normaliseDecimal(refund.amount)}:${refund.tx_hash ?? ''}`,
      ),
    };
  });
}

const distinct = <T>(values: T[]): T[] => [...new Set(values)];
