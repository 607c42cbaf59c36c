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
  /** The charge schedule's anchors (subscriptions/chargeSchedule.ts); the subscribe route sets both. */
  firstChargeAt?: Date;
  permissionStartAt?: Date;
  /** SHA-256 hex of the manage link token (subscriptions/manageTokens.ts). */
  manageTokenHash?: string;
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
      first_charge_at: subscription.firstChargeAt ?? null,
      permission_start_at: subscription.permissionStartAt ?? null,
      manage_token_hash: subscription.manageTokenHash ?? null,
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

/** Any merchant's subscription by id: for the charging workflow, which is keyed by the id. */
export async function findSubscriptionById(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The subscription a signed delegation already backs (a subscribe request sent again). */
export async function findSubscriptionByDelegationHash(
  db: Db,
  delegationHash: string,
): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('delegation_hash', '=', delegationHash)
    .executeTakeFirst();
}

/**
 * A period charged: the subscription is `active` in that period, its invoice the latest session. A
 * canceled subscription stays canceled (undefined then); a later period never moves back to an earlier one.
 */
export async function markSubscriptionRenewed(
  db: Db,
  id: string,
  period: { start: Date; end: Date; sessionId: string },
): Promise<SubscriptionRow | undefined> {
  return db
    .updateTable('subscriptions')
    .set({
      status: 'active',
      current_period_start: period.start,
      current_period_end: period.end,
      latest_session_id: period.sessionId,
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('status', '<>', 'canceled')
    .where('current_period_start', '<=', period.start)
    .returningAll()
    .executeTakeFirst();
}

/** A period's charge failed for good: `past_due` until the period ends (undefined when already canceled). */
export async function markSubscriptionPastDue(
  db: Db,
  id: string,
  period: { start: Date; end: Date; sessionId?: string },
): Promise<SubscriptionRow | undefined> {
  return db
    .updateTable('subscriptions')
    .set({
      status: 'past_due',
      current_period_start: period.start,
      current_period_end: period.end,
      ...(period.sessionId && { latest_session_id: period.sessionId }),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('status', '<>', 'canceled')
    .returningAll()
    .executeTakeFirst();
}

/**
 * Ends the subscription now; `merchantId` scopes a merchant's request (another merchant's id: undefined).
 * Once only: a canceled subscription keeps its first `canceled_at` (undefined returned then).
 */
export async function cancelSubscriptionNow(
  db: Db,
  id: string,
  at: Date,
  merchantId?: string,
): Promise<SubscriptionRow | undefined> {
  let query = db
    .updateTable('subscriptions')
    .set({ status: 'canceled', canceled_at: at, updated_at: at })
    .where('id', '=', id)
    .where('status', '<>', 'canceled');
  if (merchantId) query = query.where('merchant_id', '=', merchantId);
  return query.returningAll().executeTakeFirst();
}

/** Cancels at the end of the current period: no further charge (undefined when unknown, foreign or canceled). */
export async function markCancelAtPeriodEnd(
  db: Db,
  merchantId: string,
  id: string,
): Promise<SubscriptionRow | undefined> {
  return db
    .updateTable('subscriptions')
    .set({ cancel_at_period_end: true, updated_at: new Date() })
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .where('status', '<>', 'canceled')
    .returningAll()
    .executeTakeFirst();
}

/** The subscription a customer's manage link names (by its token's hash); any merchant's. */
export async function findSubscriptionByManageTokenHash(
  db: Db,
  manageTokenHash: string,
): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('manage_token_hash', '=', manageTokenHash)
    .executeTakeFirst();
}
