import { z } from 'zod';
import { normaliseDecimal } from '../../../money/baseUnits';
import type { SubscriptionPlanRow } from '../../../db/subscriptionPlans';
import { usdAmount } from '../../routing/decimalAmounts';

/** Request and response shapes of subscription plans (docs/service-contract.md "Routes"). */

export const PLAN_INTERVALS = ['day', 'week', 'month'] as const;

export const planIdParams = z.object({ id: z.string().uuid() });

export const createPlanBody = z
  .object({
    name: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200),
    amount: usdAmount.describe('Decimal USD charged each period, at most 6 decimals'),
    interval: z.enum(PLAN_INTERVALS, { error: `must be one of: ${PLAN_INTERVALS.join(', ')}` }),
    intervalCount: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be between 1 and 12')
      .max(12, 'must be between 1 and 12')
      .optional()
      .describe('Intervals per period; defaults to 1'),
    trialDays: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(0, 'must be between 0 and 90')
      .max(90, 'must be between 0 and 90')
      .optional()
      .describe('Days before the first charge; defaults to 0'),
  })
  .strict()
  .meta({ id: 'PlanCreate' });

export const planSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    amount: z.string().describe('Decimal USD per period'),
    interval: z.enum(PLAN_INTERVALS),
    intervalCount: z.number().int(),
    trialDays: z.number().int(),
    subscribeUrl: z.string().describe('The page where a customer grants the periodic permission'),
    archived: z.boolean(),
    archivedAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .strict()
  .meta({ id: 'Plan' });
export type PlanModel = z.infer<typeof planSchema>;

export const subscribeUrlOf = (publicBaseUrl: string, planId: string) =>
  `${publicBaseUrl}/subscribe/${planId}`;

export function toPlanModel(row: SubscriptionPlanRow, publicBaseUrl: string): PlanModel {
  return {
    id: row.id,
    name: row.name,
    amount: normaliseDecimal(row.amount),
    interval: row.interval,
    intervalCount: row.interval_count,
    trialDays: row.trial_days,
    subscribeUrl: subscribeUrlOf(publicBaseUrl, row.id),
    archived: row.archived_at !== null,
    archivedAt: row.archived_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}
