import type { Db } from '../db/client';
import { deleteEmailCodeCountersBefore } from '../db/emailCodeCounters';
import { deleteEmailCodesExpiredBefore } from '../db/emailCodes';
import { deleteEmailCodeFailuresBefore } from '../db/emailLoginLockouts';
import { deleteLoginNoncesExpiredBefore } from '../db/loginNonces';
import { deleteSessionTokenRevocationsExpiredBefore } from '../db/sessionTokenRevocations';

export interface LoginNonceActivityDependencies {
  db: Db;
}

export interface DeleteExpiredLoginNoncesInput {
  /** ISO 8601 instant: nonces that expired before it are deleted. */
  olderThan: string;
}

/** Activities over what logins leave behind: SIWE nonces (docs/decisions.md "Merchant accounts") and e-mail codes. */
export function createLoginNonceActivities({ db }: LoginNonceActivityDependencies) {
  return {
    /**
     * Deletes the login nonces, and the revocations of signed-out session tokens, whose expiry lies
     * before `olderThan`; returns how many went. Either is already refused once expired.
     */
    async deleteExpiredLoginNonces({ olderThan }: DeleteExpiredLoginNoncesInput): Promise<number> {
      const cutoff = new Date(olderThan);
      if (Number.isNaN(cutoff.getTime()))
        throw new TypeError(`olderThan is not an ISO 8601 instant: ${olderThan}`);
      // Signed-out session tokens past their expiry too: their signature check refuses them anyway.
      const [nonces, revocations] = await Promise.all([
        deleteLoginNoncesExpiredBefore(db, cutoff),
        deleteSessionTokenRevocationsExpiredBefore(db, cutoff),
      ]);
      return nonces + revocations;
    },

    /**
     * Deletes e-mail codes that expired before `olderThan`, the hourly code counters of windows that ended
     * before it and wrong-code records older than its day; returns how many rows went. None of them can
     * refuse or admit anything any more.
     */
    async deleteExpiredEmailCodes({ olderThan }: DeleteExpiredLoginNoncesInput): Promise<number> {
      const cutoff = new Date(olderThan);
      if (Number.isNaN(cutoff.getTime()))
        throw new TypeError(`olderThan is not an ISO 8601 instant: ${olderThan}`);
      const windowsEndedBefore = new Date(cutoff.getTime() - 3600 * 1000);
      // Wrong-code records count for 24 h (the e-mail login failure budget); older ones count for nothing.
      const failuresOutsideBudget = new Date(cutoff.getTime() - 24 * 3600 * 1000);
      const [codes, counters, failures] = await Promise.all([
        deleteEmailCodesExpiredBefore(db, cutoff),
        deleteEmailCodeCountersBefore(db, windowsEndedBefore),
        deleteEmailCodeFailuresBefore(db, failuresOutsideBudget),
      ]);
      return codes + counters + failures;
    },
  };
}

export type LoginNonceActivities = ReturnType<typeof createLoginNonceActivities>;
