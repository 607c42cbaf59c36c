import type { Db } from '../db/client';
import { findPrepaidBalanceDrift, type PrepaidBalanceDrift } from '../db/prepaidLedger';

export interface PrepaidBalanceActivityDependencies {
  db: Db;
}

export interface CheckPrepaidBalancesInput {
  /** Only these merchants (every merchant when omitted). */
  merchantIds?: string[];
}

/** The check of the running prepaid balances against the ledger they sum (db/prepaidLedger.ts). */
export function createPrepaidBalanceActivities({ db }: PrepaidBalanceActivityDependencies) {
  return {
    /** Recomputes each balance from the ledger; lists the merchants whose running balance differs. */
    async checkPrepaidBalances({ merchantIds }: CheckPrepaidBalancesInput = {}): Promise<{
      drifted: PrepaidBalanceDrift[];
    }> {
      return { drifted: await findPrepaidBalanceDrift(db, merchantIds ? { merchantIds } : {}) };
    },
  };
}

export type PrepaidBalanceActivities = ReturnType<typeof createPrepaidBalanceActivities>;
