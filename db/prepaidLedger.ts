import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { PrepaidLedgerEntriesTable } from './schema';

/**
 * The merchant's prepaid gas balance as a ledger: credits (top-ups) and debits (gas charges).
 * The balance is always derived from the entries, never stored as a lone mutable number.
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
    .selectFrom('prepaid_ledger_entries')
    .select(sql<string>`coalesce(sum(${signedLedgerAmount}), 0)::numeric(20, 6)`.as('balance'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow();
  return row.balance;
}

/** True when credits exceed debits: the gate for sponsored operations on mainnets. */
export async function hasPositivePrepaidBalance(db: Db, merchantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('prepaid_ledger_entries')
    .select(sql<boolean>`coalesce(sum(${signedLedgerAmount}), 0) > 0`.as('positive'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow();
  return row.positive;
}
