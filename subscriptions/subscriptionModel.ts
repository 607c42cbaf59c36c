import { z } from 'zod';
import type { SubscriptionRow } from '../db/subscriptions';

/**
 * The subscription object (docs/service-contract.md "Routes"): what the subscription routes answer and what
 * every `subscription.*` event carries, one schema for both.
 */

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'canceled'] as const;

export const subscriptionSchema = z
  .object({
    id: z.string().uuid(),
    planId: z.string().uuid(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    customerAccount: z
      .string()
      .describe("The customer's DeleGator account that granted the periodic permission"),
    chainId: z.number().int(),
    token: z.string().describe('Stablecoin symbol the periods are charged in'),
    currentPeriodStart: z.string(),
    currentPeriodEnd: z.string(),
    cancelAtPeriodEnd: z.boolean(),
    canceledAt: z.string().nullable(),
    latestSessionId: z.string().uuid().nullable().describe("The latest period's payment session"),
  })
  .strict()
  .meta({ id: 'Subscription' });
export type SubscriptionModel = z.infer<typeof subscriptionSchema>;

export function toSubscriptionModel(row: SubscriptionRow): SubscriptionModel {
  return {
    id: row.id,
    planId: row.plan_id,
    status: row.status,
    customerAccount: row.customer_account,
    chainId: row.chain_id,
    token: row.token_symbol,
    currentPeriodStart: row.current_period_start.toISOString(),
    currentPeriodEnd: row.current_period_end.toISOString(),
    cancelAtPeriodEnd: row.cancel_at_period_end,
    canceledAt: row.canceled_at?.toISOString() ?? null,
    latestSessionId: row.latest_session_id,
  };
}
