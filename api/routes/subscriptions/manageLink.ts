import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { findMerchantById } from '../../../db/merchants';
import { findSubscriptionPlanById } from '../../../db/subscriptionPlans';
import { findSubscriptionByManageTokenHash, type SubscriptionRow } from '../../../db/subscriptions';
import { normaliseDecimal } from '../../../money/baseUnits';
import { cancelMerchantSubscription } from '../../../subscriptions/cancelation';
import { MANAGE_TOKEN_PATTERN, manageTokenHashOf } from '../../../subscriptions/manageTokens';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import { signalSubscriptionCanceled } from '../../../workflowClient/subscriptions';
import { periodLabel } from '../../../web/subscribe/permissionWording';
import { renderManageNotFoundPage, renderManagePage } from '../../../web/subscribe/renderManagePage';
import { setStrictPageHeaders } from '../../../web/strictPageHeaders';
import type { AppContext } from '../../appContext';
import { notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { PLANS_TAG } from '../plans/plans';
import { subscriptionSchema, toSubscriptionModel } from './subscriptionModels';

/**
 * The customer's manage link (subscriptions/manageTokens.ts), public — the token is the credential:
 * | GET  | /subscribe/manage/{token}                 | none | 200 text/html manage page; 404 text/html |
 * | POST | /v1/subscription-manage/{token}/cancel    | none | 200 subscription, canceled at its period's end (again: unchanged); 404 |
 *
 * The customer cancels at the end of the period already paid: no further period is charged, the merchant
 * gets `subscription.canceled` when it ends (the charging workflow's path for `cancelAtPeriodEnd`).
 */

const manageTokenParams = z.object({
  token: z.string().regex(MANAGE_TOKEN_PATTERN, 'Subscription link not found'),
});

async function subscriptionOfToken(app: AppContext, token: string): Promise<SubscriptionRow | undefined> {
  if (!MANAGE_TOKEN_PATTERN.test(token)) return undefined;
  return findSubscriptionByManageTokenHash(app.db, manageTokenHashOf(token));
}

export function manageLinkRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/subscribe/manage/:token',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: PLANS_TAG,
      audience: 'dashboard',
      summary: 'The customer’s manage page of a subscription (from the manage link)',
      responses: {
        200: { description: 'Manage page', contentType: 'text/html', schema: z.string() },
        404: { description: 'Unknown link (HTML page)', contentType: 'text/html', schema: z.string() },
      },
      async handler({ ctx }) {
        const nonce = randomBytes(16).toString('base64');
        setStrictPageHeaders(ctx, nonce);
        ctx.type = 'html';
        const token = String(ctx.params.token);
        const row = await subscriptionOfToken(app, token);
        const plan = row && (await findSubscriptionPlanById(app.db, row.plan_id));
        if (!row || !plan) {
          ctx.status = 404;
          ctx.body = renderManageNotFoundPage({ nonce });
          return;
        }
        const merchant = await findMerchantById(app.db, row.merchant_id);
        ctx.status = 200;
        ctx.body = renderManagePage({
          view: {
            planName: plan.name,
            merchantName: merchant?.name ?? null,
            amount: normaliseDecimal(plan.amount),
            periodLabel: periodLabel(plan.interval, plan.interval_count),
            status: row.status,
            customerAccount: row.customer_account,
            chainId: row.chain_id,
            token: row.token_symbol,
            currentPeriodEnd: row.current_period_end,
            cancelAtPeriodEnd: row.cancel_at_period_end,
          },
          cancelUrl: `/v1/subscription-manage/${token}/cancel`,
          nonce,
        });
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/subscription-manage/:token/cancel',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: PLANS_TAG,
      audience: 'dashboard',
      summary: 'The customer cancels from the manage link: no further period is charged',
      params: manageTokenParams,
      responses: {
        200: { description: 'Subscription, to be canceled at its period end', schema: subscriptionSchema },
        404: { description: 'Unknown link' },
      },
      async handler({ params }) {
        const row = await subscriptionOfToken(app, params.token);
        if (!row) throw notFound('Subscription link not found');
        const outcome = await cancelMerchantSubscription(app.db, {
          merchantId: row.merchant_id,
          subscriptionId: row.id,
          atPeriodEnd: true,
          now: app.now(),
        });
        if (outcome.kind === 'unknown') throw notFound('Subscription link not found');
        if (outcome.kind === 'changed') {
          // Stored already; the signal only wakes the workflow sooner (it reads the row before each period).
          await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
            signalSubscriptionCanceled(app.temporal, row.id, { atPeriodEnd: true }),
          ).catch((error: unknown) =>
            app.logger.warn({ err: error, subscriptionId: row.id }, 'cancel signal not sent'),
          );
        }
        return { status: 200, body: toSubscriptionModel(outcome.row) };
      },
    }),
  ];
}
