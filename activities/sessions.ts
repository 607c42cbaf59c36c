import type { Db } from '../db/client';
import {
  expireSession,
  recordSessionDeposit,
  reopenSessionForSettlement,
  transitionSession,
} from '../db/sessions';
import { completeSessionAndCreditTopup } from '../db/topups';

export interface SessionActivityDependencies {
  db: Db;
}

/**
 * A confirmed deposit that covers one of the session's payment options, as the chain monitor signals
 * it: the option's facts plus the transfer that completed the payment.
 */
export interface DepositDetected {
  chainId: number;
  token: string;
  /** Total base units accepted for this option so far (decimal string, exact); ≥ the option amount. */
  amount: string;
  txHash: string;
  blockNumber: string;
  logIndex?: number;
  depositAddress?: string;
  decimals?: number;
}

/** Database side of the payment-session workflow. Every activity is idempotent: a replay changes nothing. */
export function createSessionActivities({ db }: SessionActivityDependencies) {
  return {
    /** awaiting_payment → expired at the workflow's expiry timer; false when the session moved on meanwhile. */
    async markSessionExpired(sessionId: string): Promise<boolean> {
      return expireSession(db, sessionId);
    },

    /** awaiting_payment → confirming, with paidAt and the deposit transaction. */
    async markSessionConfirming({
      sessionId,
      deposit,
      paidAt,
    }: {
      sessionId: string;
      deposit: DepositDetected;
      paidAt: string;
    }): Promise<boolean> {
      const updated = await recordSessionDeposit(db, {
        id: sessionId,
        txHash: deposit.txHash,
        chainId: deposit.chainId,
        paidAt: new Date(paidAt),
      });
      return updated !== undefined;
    },

    /** confirming → bridging, once the USDe is on its way to the settlement chain. */
    async markSessionBridging(sessionId: string): Promise<boolean> {
      return transitionSession(db, { id: sessionId, from: ['confirming'], to: 'bridging' });
    },

    /** confirming or bridging → completed: sUSDe delivered to the merchant; a top-up session credits its ledger once. */
    async markSessionCompleted(sessionId: string): Promise<boolean> {
      return completeSessionAndCreditTopup(db, sessionId);
    },

    /** The on-chain phase reverted: failed, with the revert reason kept for the merchant and operators. */
    async markSessionFailed({ sessionId, reason }: { sessionId: string; reason: string }): Promise<boolean> {
      return transitionSession(db, {
        id: sessionId,
        from: ['confirming', 'bridging'],
        to: 'failed',
        failureReason: reason,
      });
    },

    /** retry-forwarder: a failed, expired-with-funds or completed-with-extra-funds session settles again. */
    async markSessionSettlingAgain({
      sessionId,
      deposit,
      paidAt,
    }: {
      sessionId: string;
      deposit: DepositDetected;
      paidAt: string;
    }): Promise<boolean> {
      return reopenSessionForSettlement(db, {
        id: sessionId,
        txHash: deposit.txHash,
        chainId: deposit.chainId,
        paidAt: new Date(paidAt),
      });
    },
  };
}

export type SessionActivities = ReturnType<typeof createSessionActivities>;
