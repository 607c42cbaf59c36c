import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { LoginNonceActivities } from '../activities/loginNonces';

const { deleteExpiredLoginNonces, deleteExpiredEmailCodes } = proxyActivities<LoginNonceActivities>({
  // One DELETE on an indexed column; retried with backoff while the database is unreachable.
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 10,
  },
});

export interface LoginNonceCleanupInput {
  /** Grace period: only nonces that expired at least this many seconds ago are deleted. */
  olderThanSec: number;
}

export interface LoginNonceCleanupResult {
  /** The cutoff used, ISO 8601. */
  olderThan: string;
  /** Login nonces deleted. */
  deleted: number;
  /** E-mail codes and ended code-counter windows deleted. */
  emailCodesDeleted: number;
}

/**
 * Housekeeping run hourly by the `login-nonce-cleanup` schedule: deletes login nonces and e-mail codes
 * that expired more than `olderThanSec` ago (and e-mail code counters of windows that ended before
 * that), so the tables hold only what can still be used.
 */
export async function loginNonceCleanupWorkflow({
  olderThanSec,
}: LoginNonceCleanupInput): Promise<LoginNonceCleanupResult> {
  if (!Number.isFinite(olderThanSec) || olderThanSec < 0) {
    throw ApplicationFailure.nonRetryable(
      `olderThanSec must be a non-negative number, got ${olderThanSec}`,
      'InvalidInput',
    );
  }
  // Date.now() in a workflow is the time of the current workflow task: deterministic on replay.
  const olderThan = new Date(Date.now() - olderThanSec * 1000).toISOString();
  const deleted = await deleteExpiredLoginNonces({ olderThan });
  const emailCodesDeleted = await deleteExpiredEmailCodes({ olderThan });
  return { olderThan, deleted, emailCodesDeleted };
}
