import type { Db } from '../db/client';
import {
  cancelSubscriptionNow,
  findMerchantSubscription,
  markCancelAtPeriodEnd,
  type SubscriptionRow,
} from '../db/subscriptions';
import { storeSubscriptionEvent } from './subscriptionEvents';

/**
 * A merchant cancels a subscription (issue 42): at once — `canceled` now, its `subscription.canceled`
 * event stored in the same transaction — or at the end of its period (`cancelAtPeriodEnd`: no further
 * period is charged). The caller then signals the charging workflow, which delivers the event and stops;
 * it reads the database before every period, so a lost signal still ends it before the next charge.
 * A canceled subscription is final: canceling it again changes nothing. Another merchant's: unknown.
 */
export type CancelOutcome = { kind: 'unknown' } | { kind: 'changed' | 'unchanged'; row: SubscriptionRow };

export async function cancelMerchantSubscription(
  db: Db,
  {
    merchantId,
    subscriptionId,
    atPeriodEnd,
    now,
  }: {
    merchantId: string;
    subscriptionId: string;
    atPeriodEnd: boolean;
    now: Date;
  },
): Promise<CancelOutcome> {
  const changed = await db.transaction().execute(async (trx) => {
    if (atPeriodEnd) return markCancelAtPeriodEnd(trx, merchantId, subscriptionId);
    const row = await cancelSubscriptionNow(trx, subscriptionId, now, merchantId);
    if (row) await storeSubscriptionEvent(trx, row, { type: 'subscription.canceled' }, now);
    return row;
  });
  if (changed) return { kind: 'changed', row: changed };
  const row = await findMerchantSubscription(db, merchantId, subscriptionId);
  return row ? { kind: 'unchanged', row } : { kind: 'unknown' };
}
