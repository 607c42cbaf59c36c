import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { PrepaidBalanceActivities } from '../activities/prepaidBalances';

const { checkPrepaidBalances } = proxyActivities<PrepaidBalanceActivities>({
  // One aggregate over the ledger; retried with backoff while the database is unreachable.
  startToCloseTimeout: '10 minutes',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 10,
  },
});

/**
 * Run daily by the `prepaid-balance-check` schedule: recomputes every merchant's prepaid balance from
 * the ledger and fails, naming each merchant and both figures, when a running balance differs — a
 * failed run in the Temporal UI is the operator's alert. Nothing is corrected automatically: a drift
 * means a write bypassed the ledger, which someone must look at.
 */
export async function prepaidBalanceCheckWorkflow(): Promise<{ checked: true }> {
  const { drifted } = await checkPrepaidBalances({});
  if (drifted.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `running prepaid balance differs from the ledger for ${drifted.length} merchant(s): ${drifted
        .map((drift) => `${drift.merchantId} running ${drift.runningUsd} ledger ${drift.ledgerUsd}`)
        .join('; ')}`,
      'PrepaidBalanceDrift',
    );
  }
  return { checked: true };
}
