import { ApplicationFailure } from '@temporalio/activity';
import {
  hasMonthClosed,
  INVALID_STATEMENT_MONTH,
  parseStatementMonth,
  STATEMENT_MONTH_NOT_CLOSED,
  type StatementMonth,
} from '../billing/statementMonth';
import { renderStatementPdf } from '../billing/statementPdf';
import {
  hasBillingStatement,
  insertBillingStatement,
  merchantsAwaitingStatement,
  readStatementLedger,
} from '../db/billingStatements';
import type { Db } from '../db/client';
import { findMerchantById } from '../db/merchants';

export interface BillingStatementActivityDependencies {
  db: Db;
  /** The clock that decides whether a month has closed; tests inject one. */
  now?: () => Date;
  /** Above this many entries a statement shows per-day totals (`STATEMENT_ENTRY_LIMIT` by default). */
  entryLimit?: number;
}

export type StatementOutcome = 'generated' | 'already-generated' | 'merchant-deleted';

/** Activities of the monthly statements run (workflows/monthlyStatements.ts). */
export function createBillingStatementActivities({
  db,
  now = () => new Date(),
  entryLimit,
}: BillingStatementActivityDependencies) {
  /** The month, refused unless it is a real month that has ended by `now()`: a statement never changes. */
  function closedMonth(text: string): StatementMonth {
    const month = parseStatementMonth(text);
    if (!month)
      throw ApplicationFailure.nonRetryable(
        `not a UTC month YYYY-MM: ${JSON.stringify(text)}`,
        INVALID_STATEMENT_MONTH,
      );
    if (!hasMonthClosed(month, now()))
      throw ApplicationFailure.nonRetryable(
        `${month.month} has not closed yet: its statements can be produced from ${month.end.toISOString()}`,
        STATEMENT_MONTH_NOT_CLOSED,
      );
    return month;
  }

  return {
    /** The next `limit` merchants (by id, after `afterMerchantId`) that existed in `month` and lack its statement. */
    async listMerchantsAwaitingStatement({
      month,
      afterMerchantId,
      limit,
    }: {
      month: string;
      afterMerchantId?: string;
      limit: number;
    }): Promise<string[]> {
      const closed = closedMonth(month);
      return merchantsAwaitingStatement(db, { month: closed.month, end: closed.end, afterMerchantId, limit });
    },

    /**
     * Produces and stores one merchant's statement for a closed month, from one snapshot of its ledger.
     * Idempotent: a statement that exists is kept as it was first made.
     */
    async generateMonthlyStatement({
      merchantId,
      month,
    }: {
      merchantId: string;
      month: string;
    }): Promise<StatementOutcome> {
      const closed = closedMonth(month);
      if (await hasBillingStatement(db, merchantId, closed.month)) return 'already-generated';
      const merchant = await findMerchantById(db, merchantId);
      if (!merchant) return 'merchant-deleted';
      const ledger = await readStatementLedger(db, {
        merchantId,
        start: closed.start,
        end: closed.end,
        entryLimit,
      });
      const generatedAt = now();
      const pdf = await renderStatementPdf({
        month: closed,
        merchant: {
          id: merchant.id,
          walletAddress: merchant.wallet_address,
          name: merchant.name,
          email: merchant.email,
        },
        ledger,
        generatedAt,
      });
      const stored = await insertBillingStatement(db, {
        merchant_id: merchantId,
        month: closed.month,
        opening_balance_usd: ledger.openingBalanceUsd,
        credits_usd: ledger.creditsUsd,
        debits_usd: ledger.debitsUsd,
        closing_balance_usd: ledger.closingBalanceUsd,
        entry_count: ledger.entryCount,
        pdf: Buffer.from(pdf),
        generated_at: generatedAt,
      });
      return stored ? 'generated' : 'already-generated';
    },
  };
}

export type BillingStatementActivities = ReturnType<typeof createBillingStatementActivities>;
