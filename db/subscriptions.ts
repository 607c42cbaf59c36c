import type { Selectable } from 'kysely';
import type { Db } from './client';
import type { SubscriptionStatus, SubscriptionsTable } from './schema';

/** Subscriptions (issue 42). Every merchant read filters by merchant: another merchant's id reads as unknown. */
export type SubscriptionRow = Selectable<SubscriptionsTable>;

export interface NewSubscription {
  id: string;
  merchantId: string;
  planId: string;
  status: Extract<SubscriptionStatus, 'trialing' | 'active'>;
  customerAccount: string;
  chainId: number;
  tokenSymbol: string;
  tokenAddress: string;
  periodAmount: bigint;
  periodSeconds: number;
  /** JSON of the signed delegation, bigints as decimal strings. */
  delegationJson: string;
  delegationHash: string;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
}

/** Undefined when the delegation already backs a subscription (its hash is unique). */
export async function insertSubscription(
  db: Db,
  subscription: NewSubscription,
): Promise<SubscriptionRow | undefined> {
  return db
    .insertInto('subscriptions')
    .values({
      id: subscription.id,
      merchant_id: subscription.merchantId,
      plan_id: subscription.planId,
      status: subscription.status,
      customer_account: subscription.customerAccount,
      chain_id: subscription.chainId,
      token_symbol: subscription.tokenSymbol,
      token_address: subscription.tokenAddress,
      period_amount: subscription.periodAmount.toString(),
      period_seconds: subscription.periodSeconds,
      delegation: subscription.delegationJson,
      delegation_hash: subscription.delegationHash,
      current_period_start: subscription.currentPeriodStart,
      current_period_end: subscription.currentPeriodEnd,
    })
    .onConflict((conflict) => conflict.column('delegation_hash').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findMerchantSubscription(
  db: Db,
  merchantId: string,
  id: string,
): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** Newest first, optionally of one plan and in one status. */
export async function listMerchantSubscriptions(
  db: Db,
  merchantId: string,
  filter: { planId?: string; status?: SubscriptionStatus } = {},
): Promise<SubscriptionRow[]> {
  let query = db.selectFrom('subscriptions').selectAll().where('merchant_id', '=', merchantId);
  if (filter.planId) query = query.where('plan_id', '=', filter.planId);
  if (filter.status) query = query.where('status', '=', filter.status);
  return query.orderBy('created_at', 'desc').orderBy('id').execute();
}
