import type { Selectable } from 'kysely';
import type { Db } from './client';
import type { PlanInterval, SubscriptionPlansTable } from './schema';

/** Subscription plans (issue 42). Every merchant read filters by merchant: a foreign id reads as unknown. */
export type SubscriptionPlanRow = Selectable<SubscriptionPlansTable>;

export interface NewSubscriptionPlan {
  id: string;
  merchantId: string;
  name: string;
  amount: string;
  interval: PlanInterval;
  intervalCount: number;
  trialDays: number;
}

export async function insertSubscriptionPlan(
  db: Db,
  plan: NewSubscriptionPlan,
): Promise<SubscriptionPlanRow> {
  return db
    .insertInto('subscription_plans')
    .values({
      id: plan.id,
      merchant_id: plan.merchantId,
      name: plan.name,
      amount: plan.amount,
      interval: plan.interval,
      interval_count: plan.intervalCount,
      trial_days: plan.trialDays,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Newest first. */
export async function listSubscriptionPlans(db: Db, merchantId: string): Promise<SubscriptionPlanRow[]> {
  return db
    .selectFrom('subscription_plans')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function findMerchantSubscriptionPlan(
  db: Db,
  merchantId: string,
  id: string,
): Promise<SubscriptionPlanRow | undefined> {
  return db
    .selectFrom('subscription_plans')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** For the public subscribe route and the charging workflow, which act for the plan's own merchant. */
export async function findSubscriptionPlanById(db: Db, id: string): Promise<SubscriptionPlanRow | undefined> {
  return db.selectFrom('subscription_plans').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Archives once (the first archive time stays); undefined for an unknown or foreign plan. */
export async function archiveSubscriptionPlan(
  db: Db,
  merchantId: string,
  id: string,
  now: Date,
): Promise<SubscriptionPlanRow | undefined> {
  return db
    .updateTable('subscription_plans')
    .set((eb) => ({ archived_at: eb.fn.coalesce('archived_at', eb.val(now)) }))
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}
