import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { PrepaidLedgerEntriesTable } from './schema';

/**
 * The merchant's prepaid gas balance as a ledger: credits (top-ups) and debits (gas charges).
 * The ledger is the source of truth and append-only; `prepaid_balances` holds its running sum, kept by a
 * trigger in the same transaction as every entry (migration 200), so a balance read is one row rather
 * than a sum over every entry. `findPrepaidBalanceDrift` recomputes balances from the ledger.
 */
export type PrepaidLedgerEntryRow = Selectable<PrepaidLedgerEntriesTable>;

/** An entry's amount with its sign: credits add to the balance, debits take from it. */
export const signedLedgerAmount = sql<string>`case when direction = 'credit' then amount_usd else -amount_usd end`;

/** Positive decimal USD with at most 6 fractional digits (the column is numeric(20,6)). */
const USD_AMOUNT = /^(?:0|[1-9]\d{0,13})(?:\.\d{1,6})?$/;

export class InvalidLedgerAmountError extends Error {
  override name = 'InvalidLedgerAmountError';
  constructor(amountUsd: string) {
    super(
      `ledger amount must be a positive decimal USD string with at most 6 decimals, got ${JSON.stringify(amountUsd)}`,
    );
  }
}

interface LedgerEntryInput {
  merchantId: string;
  amountUsd: string;
  description: string;
  /** What the entry settles (top-up id, usage id); a second entry with the same reference is refused. */
  reference?: string;
}

function assertPositiveUsd(amountUsd: string): void {
  if (!USD_AMOUNT.test(amountUsd) || /^0(?:\.0+)?$/.test(amountUsd))
    throw new InvalidLedgerAmountError(amountUsd);
}

async function insertEntry(
  db: Db,
  direction: 'credit' | 'debit',
  entry: LedgerEntryInput,
): Promise<PrepaidLedgerEntryRow> {
  assertPositiveUsd(entry.amountUsd);
  return db
    .insertInto('prepaid_ledger_entries')
    .values({
      merchant_id: entry.merchantId,
      direction,
      amount_usd: entry.amountUsd,
      description: entry.description,
      reference: entry.reference ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Adds money to the merchant's prepaid balance (a top-up). */
export function creditPrepaidBalance(db: Db, entry: LedgerEntryInput): Promise<PrepaidLedgerEntryRow> {
  return insertEntry(db, 'credit', entry);
}

/** Takes money from the merchant's prepaid balance (a gas charge); the balance may go negative. */
export function debitPrepaidBalance(db: Db, entry: LedgerEntryInput): Promise<PrepaidLedgerEntryRow> {
  return insertEntry(db, 'debit', entry);
}

/** The merchant's prepaid balance in USD, a decimal string with 6 fractional digits (e.g. "12.500000"). */
export async function prepaidBalanceUsd(db: Db, merchantId: string): Promise<string> {
  const row = await db
    .selectFrom('prepaid_balances')
    .select(sql<string>`balance_usd::numeric(20, 6)::text`.as('balance'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return row?.balance ?? '0.000000';
}

/** True when credits exceed debits: the gate for sponsored operations on mainnets (the running balance). */
export async function hasPositivePrepaidBalance(db: Db, merchantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('prepaid_balances')
    .select('merchant_id')
    .where('merchant_id', '=', merchantId)
    .where('balance_usd', '>', '0')
    .executeTakeFirst();
  return row !== undefined;
}

/** A merchant whose running balance is not the sum of its ledger entries (decimal USD strings). */
export interface PrepaidBalanceDrift {
  merchantId: string;
  runningUsd: string;
  ledgerUsd: string;
}

/**
 * Recomputes balances from the ledger and lists every merchant whose running balance differs (an empty
 * list when all agree). One statement, so ledger and running balances are read in one snapshot.
 */
export async function findPrepaidBalanceDrift(
  db: Db,
  { merchantIds }: { merchantIds?: string[] } = {},
): Promise<PrepaidBalanceDrift[]> {
  const only = merchantIds === undefined ? sql`true` : sql`merchant_id = ANY(${merchantIds}::uuid[])`;
  const { rows } = await sql<{ merchant_id: string; running_usd: string; ledger_usd: string }>`
    WITH ledger AS (
      SELECT merchant_id, sum(${signedLedgerAmount}) AS balance
      FROM prepaid_ledger_entries WHERE ${only} GROUP BY merchant_id
    ), running AS (
      SELECT merchant_id, balance_usd AS balance FROM prepaid_balances WHERE ${only}
    )
    SELECT merchant_id,
      coalesce(running.balance, 0)::numeric(20, 6)::text AS running_usd,
      coalesce(ledger.balance, 0)::numeric(20, 6)::text AS ledger_usd
    FROM ledger FULL OUTER JOIN running USING (merchant_id)
    WHERE coalesce(running.balance, 0) <> coalesce(ledger.balance, 0)
    ORDER BY merchant_id`.execute(db);
  return rows.map((row) => ({
    merchantId: row.merchant_id,
    runningUsd: row.running_usd,
    ledgerUsd: row.ledger_usd,
  }));
}
