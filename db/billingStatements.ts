import { sql, type Insertable } from 'kysely';
import type { Db } from './client';
import { signedLedgerAmount } from './prepaidLedger';
import type { BillingStatementsTable } from './schema';

/**
 * Monthly statements of the prepaid gas ledger: the figures are read from the ledger in one snapshot,
 * so the opening balance, the month's entries and the closing balance always agree.
 */

export interface StatementLedgerEntry {
  createdAt: Date;
  direction: 'credit' | 'debit';
  /** numeric(20,6) decimal string, positive. */
  amountUsd: string;
  description: string;
  reference: string | null;
  /** The balance after this entry, numeric(20,6) (may be negative). */
  balanceUsd: string;
}

export interface StatementChainCharges {
  chainId: number;
  operations: number;
  /** Sum of priced charges, numeric(20,6). */
  amountUsd: string;
  /** Charges without a price snapshot (nothing debited). */
  unpricedOperations: number;
}

/** One UTC day of a month with too many entries to list one by one. */
export interface StatementLedgerDay {
  /** "YYYY-MM-DD" (UTC). */
  day: string;
  entries: number;
  creditsUsd: string;
  debitsUsd: string;
  /** The balance at the end of the day, numeric(20,6). */
  balanceUsd: string;
}

export interface StatementLedger {
  openingBalanceUsd: string;
  creditsUsd: string;
  debitsUsd: string;
  closingBalanceUsd: string;
  /** Entries dated in the month. */
  entryCount: number;
  /**
   * Every entry of the month when there are at most `entryLimit`; otherwise per-day totals (`days`)
   * and no entries, so a statement stays a readable size and is built in bounded memory.
   */
  entries: StatementLedgerEntry[];
  days?: StatementLedgerDay[];
  chargesByChain: StatementChainCharges[];
}

/** Above this many entries in a month, a statement lists per-day totals (the charges CSV has every one). */
export const STATEMENT_ENTRY_LIMIT = 2_000;

interface StatementWindow {
  merchantId: string;
  start: Date;
  end: Date;
}

/** The merchant's ledger for [start, end), read in one repeatable-read snapshot. */
export function readStatementLedger(
  db: Db,
  { entryLimit = STATEMENT_ENTRY_LIMIT, ...window }: StatementWindow & { entryLimit?: number },
): Promise<StatementLedger> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const totals = await readTotals(trx, window);
      const itemised = totals.entryCount <= entryLimit;
      return {
        openingBalanceUsd: totals.opening,
        creditsUsd: totals.credits,
        debitsUsd: totals.debits,
        closingBalanceUsd: totals.closing,
        entryCount: totals.entryCount,
        entries: itemised ? await readEntries(trx, window, totals.opening) : [],
        ...(!itemised && { days: await readDayTotals(trx, window, totals.opening) }),
        chargesByChain: await readChargesByChain(trx, window),
      };
    });
}

/** Opening balance (before the month), the month's credits and debits, the closing balance, the entry count. */
async function readTotals(trx: Db, { merchantId, start, end }: StatementWindow) {
  const totals = await trx
    .selectFrom('prepaid_ledger_entries')
    .select([
      sql<string>`coalesce(sum(${signedLedgerAmount}) filter (where created_at < ${start}), 0)::numeric(20, 6)::text`.as(
        'opening',
      ),
      sql<string>`coalesce(sum(amount_usd) filter (where created_at >= ${start} and direction = 'credit'), 0)::numeric(20, 6)::text`.as(
        'credits',
      ),
      sql<string>`coalesce(sum(amount_usd) filter (where created_at >= ${start} and direction = 'debit'), 0)::numeric(20, 6)::text`.as(
        'debits',
      ),
      sql<string>`coalesce(sum(${signedLedgerAmount}), 0)::numeric(20, 6)::text`.as('closing'),
      sql<string>`count(*) filter (where created_at >= ${start})`.as('entry_count'),
    ])
    .where('merchant_id', '=', merchantId)
    .where('created_at', '<', end)
    .executeTakeFirstOrThrow();
  return { ...totals, entryCount: Number(totals.entry_count) };
}

function entriesInMonth(trx: Db, { merchantId, start, end }: StatementWindow) {
  return trx
    .selectFrom('prepaid_ledger_entries')
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', start)
    .where('created_at', '<', end);
}

/** Every entry of the month in order, with the running balance after each. */
async function readEntries(
  trx: Db,
  window: StatementWindow,
  opening: string,
): Promise<StatementLedgerEntry[]> {
  const rows = await entriesInMonth(trx, window)
    .select([
      'created_at',
      'direction',
      sql<string>`amount_usd::text`.as('amount_usd'),
      'description',
      'reference',
      sql<string>`(${opening}::numeric + sum(${signedLedgerAmount}) over (order by created_at, id))::numeric(20, 6)::text`.as(
        'balance',
      ),
    ])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    createdAt: row.created_at,
    direction: row.direction,
    amountUsd: row.amount_usd,
    description: row.description,
    reference: row.reference,
    balanceUsd: row.balance,
  }));
}

/** Per-UTC-day totals of the month, with the balance at the end of each day. */
async function readDayTotals(
  trx: Db,
  window: StatementWindow,
  opening: string,
): Promise<StatementLedgerDay[]> {
  const utcDay = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await entriesInMonth(trx, window)
    .select([
      utcDay.as('day'),
      sql<string>`count(*)`.as('entries'),
      sql<string>`coalesce(sum(amount_usd) filter (where direction = 'credit'), 0)::numeric(20, 6)::text`.as(
        'credits',
      ),
      sql<string>`coalesce(sum(amount_usd) filter (where direction = 'debit'), 0)::numeric(20, 6)::text`.as(
        'debits',
      ),
      sql<string>`(${opening}::numeric + sum(sum(${signedLedgerAmount})) over (order by ${utcDay}))::numeric(20, 6)::text`.as(
        'balance',
      ),
    ])
    .groupBy(utcDay)
    .orderBy(utcDay)
    .execute();
  return rows.map((row) => ({
    day: row.day,
    entries: Number(row.entries),
    creditsUsd: row.credits,
    debitsUsd: row.debits,
    balanceUsd: row.balance,
  }));
}

/** The month's gas charges per chain: operations, priced total, operations without a price. */
async function readChargesByChain(
  trx: Db,
  { merchantId, start, end }: StatementWindow,
): Promise<StatementChainCharges[]> {
  const rows = await trx
    .selectFrom('gas_charges')
    .select([
      'chain_id',
      sql<string>`count(*)`.as('operations'),
      sql<string>`coalesce(sum(amount_usd), 0)::numeric(20, 6)::text`.as('amount'),
      sql<string>`count(*) filter (where amount_usd is null)`.as('unpriced'),
    ])
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', start)
    .where('created_at', '<', end)
    .groupBy('chain_id')
    .orderBy('chain_id')
    .execute();
  return rows.map((row) => ({
    chainId: row.chain_id,
    operations: Number(row.operations),
    amountUsd: row.amount,
    unpricedOperations: Number(row.unpriced),
  }));
}

/**
 * Merchants that existed before `end` and have no statement for `month` yet, by id after
 * `afterMerchantId`: the statement run's work list, resumable at any point.
 */
export async function merchantsAwaitingStatement(
  db: Db,
  {
    month,
    end,
    afterMerchantId,
    limit,
  }: { month: string; end: Date; afterMerchantId?: string; limit: number },
): Promise<string[]> {
  let query = db
    .selectFrom('merchants')
    .select('merchants.id')
    .where('merchants.created_at', '<', end)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('billing_statements')
            .select('billing_statements.month')
            .whereRef('billing_statements.merchant_id', '=', 'merchants.id')
            .where('billing_statements.month', '=', month),
        ),
      ),
    );
  if (afterMerchantId !== undefined) query = query.where('merchants.id', '>', afterMerchantId);
  const rows = await query.orderBy('merchants.id').limit(limit).execute();
  return rows.map((row) => row.id);
}

/** Stores a statement unless one exists for (merchant, month); true when this call stored it. */
export async function insertBillingStatement(
  db: Db,
  statement: Insertable<BillingStatementsTable>,
): Promise<boolean> {
  const inserted = await db
    .insertInto('billing_statements')
    .values(statement)
    .onConflict((oc) => oc.columns(['merchant_id', 'month']).doNothing())
    .returning('month')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Whether the merchant's statement for `month` exists (without reading its PDF). */
export async function hasBillingStatement(db: Db, merchantId: string, month: string): Promise<boolean> {
  const row = await db
    .selectFrom('billing_statements')
    .select('month')
    .where('merchant_id', '=', merchantId)
    .where('month', '=', month)
    .executeTakeFirst();
  return row !== undefined;
}

/** The stored PDF of the merchant's statement for `month`, or undefined when there is none (yet). */
export async function findBillingStatementPdf(
  db: Db,
  merchantId: string,
  month: string,
): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('billing_statements')
    .select('pdf')
    .where('merchant_id', '=', merchantId)
    .where('month', '=', month)
    .executeTakeFirst();
  return row?.pdf;
}
