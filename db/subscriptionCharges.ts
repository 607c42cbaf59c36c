import type { Selectable } from 'kysely';
import type { Db } from './client';
import type { SubscriptionChargesTable } from './schema';

/**
 * A subscription's charges, one per period (issue 42). The row is opened BEFORE the period's delegation
 * is redeemed and (subscription, period index) is unique: whoever opens it again (a retried activity, a
 * replayed workflow, a restarted worker) gets the same row back, sees whether it was redeemed, and never
 * redeems a second time for the period.
 */
export type SubscriptionChargeRow = Selectable<SubscriptionChargesTable>;

export async function openPeriodCharge(
  db: Db,
  charge: {
    subscriptionId: string;
    periodIndex: number;
    sessionId: string;
    /** A block at or before this moment: where a retry looks for the period's transfer from. */
    fromBlock?: bigint;
  },
): Promise<{ charge: SubscriptionChargeRow; opened: boolean }> {
  const inserted = await db
    .insertInto('subscription_charges')
    .values({
      subscription_id: charge.subscriptionId,
      period_index: charge.periodIndex,
      session_id: charge.sessionId,
      from_block: charge.fromBlock?.toString() ?? null,
    })
    .onConflict((conflict) => conflict.constraint('subscription_charges_period_once').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { charge: inserted, opened: true };
  const existing = await findPeriodCharge(db, charge.subscriptionId, charge.periodIndex);
  return { charge: existing!, opened: false };
}

export async function findPeriodCharge(
  db: Db,
  subscriptionId: string,
  periodIndex: number,
): Promise<SubscriptionChargeRow | undefined> {
  return db
    .selectFrom('subscription_charges')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('period_index', '=', periodIndex)
    .executeTakeFirst();
}

/** Records the redemption once; a charge already redeemed keeps its first transaction. */
export async function markChargeRedeemed(
  db: Db,
  chargeId: string,
  txHash: string,
): Promise<SubscriptionChargeRow> {
  const updated = await db
    .updateTable('subscription_charges')
    .set({ status: 'redeemed', tx_hash: txHash, failure_reason: null, updated_at: new Date() })
    .where('id', '=', chargeId)
    .where('status', '<>', 'redeemed')
    .returningAll()
    .executeTakeFirst();
  return (
    updated ??
    (await db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('id', '=', chargeId)
      .executeTakeFirstOrThrow())
  );
}

/** A failed attempt (nothing moved): counted, with its reason; a redeemed charge never becomes failed. */
export async function markChargeFailed(
  db: Db,
  chargeId: string,
  failureReason: string,
): Promise<SubscriptionChargeRow | undefined> {
  return db
    .updateTable('subscription_charges')
    .set((eb) => ({
      status: 'failed',
      failure_reason: failureReason,
      failed_attempts: eb('failed_attempts', '+', 1),
      updated_at: new Date(),
    }))
    .where('id', '=', chargeId)
    .where('status', '<>', 'redeemed')
    .returningAll()
    .executeTakeFirst();
}
