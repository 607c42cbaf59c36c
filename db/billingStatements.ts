import { sql, type Insertable } from 'kysely';
import type { Db } from './client';
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

export interface StatementLedger {
  openingBalanceUsd: string;
  creditsUsd: string;
  debitsUsd: string;
  closingBalanceUsd: string;
  entries: StatementLedgerEntry[];
  chargesByChain: StatementChainCharges[];
}

const signedAmount = sql<string>`case when direction = 'credit' then amount_usd else -amount_usd end`;

/** The merchant's ledger for [start, end), read in one repeatable-read snapshot. */
export function readStatementLedger(
  db: Db,
  { merchantId, start, end }: { merchantId: string; start: Date; end: Date },
): Promise<StatementLedger> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const totals = await trx
        .selectFrom('prepaid_ledger_entries')
        .select([
          sql<string>`coalesce(sum(${signedAmount}) filter (where created_at < ${start}), 0)::numeric(20, 6)::text`.as(
            'opening',
          ),
          sql<string>`coalesce(sum(amount_usd) filter (where created_at >= ${start} and direction = 'credit'), 0)::numeric(20, 6)::text`.as(
            'credits',
          ),
          sql<string>`coalesce(sum(amount_usd) filter (where created_at >= ${start} and direction = 'debit'), 0)::numeric(20, 6)::text`.as(
            'debits',
          ),
          sql<string>`coalesce(sum(${signedAmount}), 0)::numeric(20, 6)::text`.as('closing'),
        ])
        .where('merchant_id', '=', merchantId)
        .where('created_at', '<', end)
        .executeTakeFirstOrThrow();

      const entries = await trx
        .selectFrom('prepaid_ledger_entries')
        .select([
          'created_at',
          'direction',
          sql<string>`amount_usd::text`.as('amount_usd'),
          'description',
          'reference',
          sql<string>`(${totals.opening}::numeric + sum(${signedAmount}) over (order by created_at, id))::numeric(20, 6)::text`.as(
            'balance',
          ),
        ])
        .where('merchant_id', '=', merchantId)
        .where('created_at', '>=', start)
        .where('created_at', '<', end)
        .orderBy('created_at')
        .orderBy('id')
        .execute();

      const chargesByChain = await trx
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

      return {
        openingBalanceUsd: totals.opening,
        creditsUsd: totals.credits,
        debitsUsd: totals.debits,
        closingBalanceUsd: totals.closing,
        entries: entries.map((row) => ({
          createdAt: row.created_at,
          direction: row.direction,
          amountUsd: row.amount_usd,
          description: row.description,
          reference: row.reference,
          balanceUsd: row.balance,
        })),
        chargesByChain: chargesByChain.map((row) => ({
          chainId: row.chain_id,
          operations: Number(row.operations),
          amountUsd: row.amount,
          unpricedOperations: Number(row.unpriced),
        })),
      };
    });
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
