import type { Db } from '../db/client';
import { deleteLoginNoncesExpiredBefore } from '../db/loginNonces';

export interface LoginNonceActivityDependencies {
  db: Db;
}

export interface DeleteExpiredLoginNoncesInput {
  /** ISO 8601 instant: nonces that expired before it are deleted. */
  olderThan: string;
}

/** Activities over the login nonces that `GET /v1/auth/login-payload` issues (DESIGN §5). */
export function createLoginNonceActivities({ db }: LoginNonceActivityDependencies) {
  return {
    /**
     * Deletes the login nonces whose expiry lies before `olderThan`; returns how many went.
     * A deleted nonce can no longer be verified, which is already true of an expired one.
     */
    async deleteExpiredLoginNonces({ olderThan }: DeleteExpiredLoginNoncesInput): Promise<number> {
      const cutoff = new Date(olderThan);
      if (Number.isNaN(cutoff.getTime()))
        throw new TypeError(`olderThan is not an ISO 8601 instant: ${olderThan}`);
      return deleteLoginNoncesExpiredBefore(db, cutoff);
    },
  };
}

export type LoginNonceActivities = ReturnType<typeof createLoginNonceActivities>;
