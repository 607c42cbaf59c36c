import { z } from 'zod';
import { SUBSCRIPTION_STATUSES } from '../../../subscriptions/subscriptionModel';

/**
 * The subscription object (subscriptions/subscriptionModel.ts, shared with the `subscription.*` events),
 * the list filter and the cancel body (docs/service-contract.md "Routes").
 */
export {
  SUBSCRIPTION_STATUSES,
  subscriptionSchema,
  toSubscriptionModel,
  type SubscriptionModel,
} from '../../../subscriptions/subscriptionModel';

export const subscriptionIdParams = z.object({ id: z.string().uuid() });

export const listSubscriptionsQuery = z
  .object({
    planId: z.string().uuid('must be a plan id').optional(),
    status: z
      .enum(SUBSCRIPTION_STATUSES, { error: `must be one of: ${SUBSCRIPTION_STATUSES.join(', ')}` })
      .optional(),
  })
  .strict();

export const cancelSubscriptionBody = z
  .object({
    atPeriodEnd: z
      .boolean({ error: 'must be a boolean' })
      .optional()
      .describe('true: no further period is charged and it ends then; false or absent: canceled at once'),
  })
  .strict()
  .meta({ id: 'SubscriptionCancel' });
