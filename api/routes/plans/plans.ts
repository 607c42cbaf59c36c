import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  archiveSubscriptionPlan,
  findMerchantSubscriptionPlan,
  insertSubscriptionPlan,
  listSubscriptionPlans,
} from '../../../db/subscriptionPlans';
import type { AppContext } from '../../appContext';
import { notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { twinRouteSets, type TwinRouteSet } from '../../routing/twinRouteSets';
import { createPlanBody, planIdParams, planSchema, toPlanModel } from './planModels';

/**
 * Subscription plans under `/v1/merchants/me/plans` (JWT) and `/v1/plans` (SK), identical shapes:
 * | POST | (collection)  | 201 plan |
 * | GET  | (collection)  | 200 list, newest first |
 * | GET  | /{id}         | 200 plan |
 * | POST | /{id}/archive | 200 plan, archived (again: unchanged) |
 */

const PLAN_ROUTE_SETS = twinRouteSets({ jwtBase: '/v1/merchants/me/plans', skBase: '/v1/plans' });

export const PLANS_TAG = 'Subscriptions';

export const planNotFound = () => notFound('Plan not found');

function planRoutesFor(app: AppContext, { base, auth, audience, label }: TwinRouteSet): AnyRoute[] {
  const toModel = (row: Parameters<typeof toPlanModel>[0]) => toPlanModel(row, app.config.PUBLIC_BASE_URL);
  return [
    defineRoute({
      method: 'post',
      path: base,
      auth,
      tag: PLANS_TAG,
      audience,
      summary: `Create a subscription plan (${label})`,
      body: createPlanBody,
      responses: {
        201: { description: 'Created', schema: planSchema },
        400: { description: 'Invalid field' },
      },
      async handler({ merchantId, body }) {
        const row = await insertSubscriptionPlan(app.db, {
          id: randomUUID(),
          merchantId,
          name: body.name,
          amount: body.amount,
          interval: body.interval,
          intervalCount: body.intervalCount ?? 1,
          trialDays: body.trialDays ?? 0,
        });
        return { status: 201, body: toModel(row) };
      },
    }),

    defineRoute({
      method: 'get',
      path: base,
      auth,
      tag: PLANS_TAG,
      audience,
      summary: `List subscription plans, newest first (${label})`,
      responses: {
        200: {
          description: 'Plans, archived ones included',
          schema: z.object({ data: z.array(planSchema) }),
        },
      },
      async handler({ merchantId }) {
        return {
          status: 200,
          body: { data: (await listSubscriptionPlans(app.db, merchantId)).map(toModel) },
        };
      },
    }),

    defineRoute({
      method: 'get',
      path: `${base}/:id`,
      auth,
      tag: PLANS_TAG,
      audience,
      summary: `One subscription plan (${label})`,
      params: planIdParams,
      responses: {
        200: { description: 'Plan', schema: planSchema },
        404: { description: 'Unknown or foreign plan' },
      },
      async handler({ merchantId, params }) {
        const row = await findMerchantSubscriptionPlan(app.db, merchantId, params.id);
        if (!row) throw planNotFound();
        return { status: 200, body: toModel(row) };
      },
    }),

    defineRoute({
      method: 'post',
      path: `${base}/:id/archive`,
      auth,
      tag: PLANS_TAG,
      audience,
      summary: `Archive a plan: no new subscriber; existing subscriptions keep charging (${label})`,
      params: planIdParams,
      responses: {
        200: { description: 'Archived plan', schema: planSchema },
        404: { description: 'Unknown or foreign plan' },
      },
      async handler({ merchantId, params }) {
        const row = await archiveSubscriptionPlan(app.db, merchantId, params.id, app.now());
        if (!row) throw planNotFound();
        return { status: 200, body: toModel(row) };
      },
    }),
  ];
}

export function planRoutes(app: AppContext): AnyRoute[] {
  return PLAN_ROUTE_SETS.flatMap((routeSet) => planRoutesFor(app, routeSet));
}
