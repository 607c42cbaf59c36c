import type { Db } from '../db/client';
import { expireSession, recordSessionDeposit } from '../db/sessions';

export interface SessionActivityDependencies {
  db: Db;
}

/** A deposit the chain monitor saw at one of the session's addresses. */
export interface DepositDetected {
  chainId: number;
  token: string;
  /** Base units, decimal string (exact). */
  amount: string;
  txHash: string;
  blockNumber: string;
}

/** Database side of the payment-session workflow. Every activity is idempotent: a replay changes nothing. */
export function createSessionActivities({ db }: SessionActivityDependencies) {
  return {
    /** awaiting_payment → expired at the workflow's expiry timer; false when the session moved on meanwhile. */
    async markSessionExpired(sessionId: string): Promise<boolean> {
      return expireSession(db, sessionId);
    },

    /** awaiting_payment → confirming, with paidAt and the deposit transaction. */
    async markSessionConfirming({ sessionId, deposit, paidAt }: { sessionId: string; deposit: DepositDetected; paidAt: string }): Promise<boolean> {
      const updated = await recordSessionDeposit(db, { id: sessionId, txHash: deposit.txHash, chainId: deposit.chainId, paidAt: new Date(paidAt) });
      return updated !== undefined;
    },
  };
}

export type SessionActivities = ReturnType<typeof createSessionActivities>;
