import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { LoginNonceActivities } from '../activities/loginNonces';

const { deleteExpiredLoginNonces } = proxyActivities<LoginNonceActivities>({
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
  deleted: number;
}

/**
 * Housekeeping run hourly by the `login-nonce-cleanup` schedule: deletes login nonces that
 * expired more than `olderThanSec` ago, so the table holds only nonces that can still be used.
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
  return { olderThan, deleted };
}
