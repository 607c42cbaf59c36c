import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { z } from 'zod';
import { networkByChainId } from '../../../config/networks';
import { findMerchantById } from '../../../db/merchants';
import { findSubscriptionPlanById } from '../../../db/subscriptionPlans';
import { normaliseDecimal, toBaseUnits } from '../../../money/baseUnits';
import { subscriptionChains } from '../../../subscriptions/executorChains';
import type { SubscribeOption } from '../../../web/subscribe/clientData';
import { renderSubscribeNotFoundPage, renderSubscribePage } from '../../../web/subscribe/renderSubscribePage';
import { setStrictPageHeaders } from '../../../web/strictPageHeaders';
import type { AppContext } from '../../appContext';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { PLANS_TAG } from '../plans/plans';

/**
 * | GET | /subscribe/{planId} | none | 200 text/html subscribe page (the checkout page's CSP); 404 text/html |
 *
 * The page a plan's `subscribeUrl` opens (web/subscribe/): the plan, and every chain × stablecoin where the
 * subscription executor can charge it, each with the plan's amount in that token's base units — exactly the
 * `periodAmount` the permission must carry.
 */

const UUID = z.string().uuid();

export function subscribeOptions(app: AppContext, amount: string): SubscribeOption[] {
  const executor = app.config.SUBSCRIPTION_EXECUTOR_ADDRESS
    ? getAddress(app.config.SUBSCRIPTION_EXECUTOR_ADDRESS)
    : undefined;
  return subscriptionChains(app.networks, executor).flatMap((chain) =>
    chain.tokens.map((token) => ({
      key: `${chain.network.chainId}:${token.symbol}`,
      chainId: chain.network.chainId,
      network: networkByChainId(chain.network.chainId)?.displayName ?? chain.network.network,
      symbol: token.symbol,
      tokenAddress: token.address,
      decimals: token.decimals,
      periodAmount: toBaseUnits(normaliseDecimal(amount), token.decimals).toString(),
      executor: chain.executor,
      delegationManager: chain.framework.delegationManager,
      erc20PeriodTransferEnforcer: chain.framework.erc20PeriodTransferEnforcer,
    })),
  );
}

export function subscribePageRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/subscribe/:planId',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: PLANS_TAG,
      audience: 'dashboard',
      summary: 'The subscribe page a customer opens from a plan’s subscribeUrl',
      responses: {
        200: { description: 'Subscribe page', contentType: 'text/html', schema: z.string() },
        404: { description: 'Unknown plan (HTML page)', contentType: 'text/html', schema: z.string() },
      },
      // The id is checked here rather than by a params schema: a bad link answers the HTML page, not JSON.
      async handler({ ctx }) {
        const nonce = randomBytes(16).toString('base64');
        setStrictPageHeaders(ctx, nonce);
        ctx.type = 'html';
        const planId = String(ctx.params.planId);
        const plan = UUID.safeParse(planId).success
          ? await findSubscriptionPlanById(app.db, planId)
          : undefined;
        if (!plan) {
          ctx.status = 404;
          ctx.body = renderSubscribeNotFoundPage({ nonce });
          return;
        }
        const merchant = await findMerchantById(app.db, plan.merchant_id);
        ctx.status = 200;
        ctx.body = renderSubscribePage({
          plan: {
            id: plan.id,
            name: plan.name,
            amount: normaliseDecimal(plan.amount),
            interval: plan.interval,
            intervalCount: plan.interval_count,
            trialDays: plan.trial_days,
            archived: plan.archived_at !== null,
            merchantName: merchant?.name ?? null,
          },
          options: subscribeOptions(app, plan.amount),
          now: app.now(),
          nonce,
        });
      },
    }),
  ];
}
