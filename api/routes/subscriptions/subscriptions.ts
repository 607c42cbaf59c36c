import { z } from 'zod';
import { findMerchantSubscription, listMerchantSubscriptions } from '../../../db/subscriptions';
import type { AppContext } from '../../appContext';
import { cancelMerchantSubscription } from '../../../subscriptions/cancelation';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import { signalSubscriptionCanceled } from '../../../workflowClient/subscriptions';
import { notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { twinRouteSets, type TwinRouteSet } from '../../routing/twinRouteSets';
import { PLANS_TAG } from '../plans/plans';
import {
  cancelSubscriptionBody,
  listSubscriptionsQuery,
  subscriptionIdParams,
  subscriptionSchema,
  toSubscriptionModel,
} from './subscriptionModels';

/**
 * Subscription reads under `/v1/subscriptions` (SK) and `/v1/merchants/me/subscriptions` (JWT):
 * | GET | (collection) | 200 list, newest first; `planId`, `status` filters |
 * | GET  | /{id}        | 200 subscription; another merchant's id 404 |
 * | POST | /{id}/cancel | 200 subscription, canceled at once or at its period's end (again: unchanged) |
 */

const SUBSCRIPTION_ROUTE_SETS = twinRouteSets({
  jwtBase: '/v1/merchants/me/subscriptions',
  skBase: '/v1/subscriptions',
});

function subscriptionRoutesFor(app: AppContext, { base, auth, audience, label }: TwinRouteSet): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: base,
      auth,
      tag: PLANS_TAG,
      audience,
      summary: `List subscriptions, newest first (${label})`,
      query: listSubscriptionsQuery,
      responses: {
        200: { description: 'Subscriptions', schema: z.object({ data: z.array(subscriptionSchema) }) },
        400: { description: 'Invalid filter' },
      },
      async handler({ merchantId, query }) {
        const rows = await listMerchantSubscriptions(app.db, merchantId, query);
        return { status: 200, body: { data: rows.map(toSubscriptionModel) } };
      },
    }),

    defineRoute({
      method: 'get',
      path: `${base}/:id`,
      auth,
      tag: PLANS_TAG,
      audience,
      summary: `One subscription (${label})`,
      params: subscriptionIdParams,
      responses: {
        200: { description: 'Subscription', schema: subscriptionSchema },
        404: { description: 'Unknown or foreign subscription' },
      },
      async handler({ merchantId, params }) {
        const row = await findMerchantSubscription(app.db, merchantId, params.id);
        if (!row) throw notFound('Subscription not found');
        return { status: 200, body: toSubscriptionModel(row) };
      },
    }),

    defineRoute({
      method: 'post',
      path: `${base}/:id/cancel`,
      auth,
      tag: PLANS_TAG,
      audience,
      summary: `Cancel a subscription, at once or at the end of its period (${label})`,
      params: subscriptionIdParams,
      body: cancelSubscriptionBody,
      responses: {
        200: {
          description: 'Subscription, canceled or to be canceled at its period end',
          schema: subscriptionSchema,
        },
        400: { description: 'Invalid field' },
        404: { description: 'Unknown or foreign subscription' },
      },
      async handler({ merchantId, params, body }) {
        const atPeriodEnd = body.atPeriodEnd ?? false;
        const outcome = await cancelMerchantSubscription(app.db, {
          merchantId,
          subscriptionId: params.id,
          atPeriodEnd,
          now: app.now(),
        });
        if (outcome.kind === 'unknown') throw notFound('Subscription not found');
        if (outcome.kind === 'changed') {
          // Stored already; the signal only wakes the workflow sooner (it reads the row before each period).
          await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
            signalSubscriptionCanceled(app.temporal, params.id, { atPeriodEnd }),
          ).catch((error: unknown) =>
            app.logger.warn({ err: error, subscriptionId: params.id }, 'cancel signal not sent'),
          );
        }
        return { status: 200, body: toSubscriptionModel(outcome.row) };
      },
    }),
  ];
}

export function subscriptionRoutes(app: AppContext): AnyRoute[] {
  return SUBSCRIPTION_ROUTE_SETS.flatMap((routeSet) => subscriptionRoutesFor(app, routeSet));
}
