import { ActivityFailure, ApplicationFailure, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { BillingStatementActivities, StatementOutcome } from '../activities/billingStatements';
import {
  INVALID_STATEMENT_MONTH,
  latestClosedMonth,
  STATEMENT_MONTH_NOT_CLOSED,
} from '../billing/statementMonth';

const { listMerchantsAwaitingStatement, generateMonthlyStatement } =
  proxyActivities<BillingStatementActivities>({
    // One ledger read and one PDF per merchant; retried with backoff while Postgres is unreachable.
    startToCloseTimeout: '2 minutes',
    retry: {
      initialInterval: '5 seconds',
      backoffCoefficient: 2,
      maximumInterval: '5 minutes',
      maximumAttempts: 10,
      nonRetryableErrorTypes: [INVALID_STATEMENT_MONTH, STATEMENT_MONTH_NOT_CLOSED],
    },
  });

/** Merchants listed per page, statements produced at once, and pages per run before continue-as-new. */
const PAGE_SIZE = 50;
const CONCURRENCY = 5;
const PAGES_PER_RUN = 20;
/** Failed merchant ids kept for the final error (the count is exact). */
const FAILURES_KEPT = 20;

export interface MonthlyStatementsInput {
  /** "YYYY-MM"; by default the latest month that has closed when the run starts (the schedule's case). */
  month?: string;
  /** Carried across continue-as-new: the last merchant id handled. */
  afterMerchantId?: string;
  /** Carried across continue-as-new. */
  totals?: MonthlyStatementsResult;
}

export interface MonthlyStatementsResult {
  month: string;
  generated: number;
  alreadyGenerated: number;
  failed: number;
  failedMerchantIds: string[];
}

/**
 * Run by the `monthly-statements` schedule shortly after 00:00 UTC on the 1st: produces the closed
 * month's statement for every merchant that existed in it. Resumable and idempotent: merchants are
 * walked by id, and a statement that exists is never remade, so a rerun (an operator starting it with
 * `{ month }`) only fills in what is missing. One merchant's failure does not stop the others; the run
 * fails at the end, naming them.
 */
export async function monthlyStatementsWorkflow(
  input: MonthlyStatementsInput = {},
): Promise<MonthlyStatementsResult> {
  // Date.now() in a workflow is the current workflow task's time: deterministic on replay.
  const month = input.month ?? latestClosedMonth(new Date(Date.now())).month;
  const totals: MonthlyStatementsResult = input.totals ?? {
    month,
    generated: 0,
    alreadyGenerated: 0,
    failed: 0,
    failedMerchantIds: [],
  };
  let afterMerchantId = input.afterMerchantId;

  for (let page = 0; page < PAGES_PER_RUN; page++) {
    const merchantIds = await listMerchantsAwaitingStatement({ month, afterMerchantId, limit: PAGE_SIZE });
    for (let index = 0; index < merchantIds.length; index += CONCURRENCY) {
      const batch = merchantIds.slice(index, index + CONCURRENCY);
      const outcomes = await Promise.all(batch.map((merchantId) => statementOutcome(merchantId, month)));
      outcomes.forEach((outcome, position) => {
        if (outcome === 'generated') totals.generated += 1;
        else if (outcome === 'already-generated') totals.alreadyGenerated += 1;
        else if (outcome === 'failed') {
          totals.failed += 1;
          if (totals.failedMerchantIds.length < FAILURES_KEPT)
            totals.failedMerchantIds.push(batch[position]!);
        }
        // 'merchant-deleted': the account went away during the run; there is nobody to send it to.
      });
    }
    if (merchantIds.length < PAGE_SIZE) return finish(totals);
    afterMerchantId = merchantIds[merchantIds.length - 1];
  }
  return continueAsNew<typeof monthlyStatementsWorkflow>({ month, afterMerchantId, totals });
}

async function statementOutcome(merchantId: string, month: string): Promise<StatementOutcome | 'failed'> {
  try {
    return await generateMonthlyStatement({ merchantId, month });
  } catch (error) {
    // A month that is invalid or still open fails every merchant alike: stop the run.
    if (
      error instanceof ActivityFailure &&
      error.cause instanceof ApplicationFailure &&
      error.cause.nonRetryable
    )
      throw error;
    return 'failed';
  }
}

function finish(totals: MonthlyStatementsResult): MonthlyStatementsResult {
  if (totals.failed > 0)
    throw ApplicationFailure.nonRetryable(
      `${totals.failed} statement(s) for ${totals.month} failed, e.g. merchants ${totals.failedMerchantIds.join(', ')}; start the workflow again with { month: "${totals.month}" } to fill them in`,
      'StatementsFailed',
    );
  return totals;
}
