import type { YieldDeploymentStatus } from '../../../../db/schema';
import { transitionYieldDeployment } from '../../../../db/yieldDeployments';
import { queueYieldDeploy, returnYieldDeploy } from '../../../../db/yieldDeployLimits';
import { microUsdToFixed6 } from '../../../../money/microUsd';
import { startYieldDeploymentWorkflow } from '../../../../workflowClient/yieldWorkflows';
import { withTemporalDeadline } from '../../../../workflowClient/connection';
import type { AppContext } from '../../../appContext';
import { HttpError } from '../../../httpErrors';
import { defineRoute, type AnyRoute } from '../../../routing/route';
import { deployChargeTermsNow } from '../deployChargeTerms';
import { deployment } from '../yieldModels';
import {
  DEPLOYMENT_ROUTE,
  idParams,
  present,
  requireDeployment,
  requireYieldNetwork,
  wrongState,
  YIELD_BASE,
  yieldDeploymentNotFound,
} from './deploymentAccess';

/**
 * Queueing the on-chain vault deploy: the limits and the charge taken in one transaction, then the workflow
 * started; a start Temporal did not accept gives everything back.
 */
export function yieldDeployRoutes(app: AppContext): AnyRoute[] {
  const common = DEPLOYMENT_ROUTE;
  return [
    defineRoute({
      ...common,
      method: 'post',
      path: `${YIELD_BASE}/:id/deploy`,
      summary: 'Queue the on-chain vault deployment (workflow yield-deployment-<id>)',
      params: idParams,
      responses: {
        202: { description: 'Deploying', schema: deployment },
        404: { description: 'Unknown id' },
        409: { description: 'Not a draft or failed deployment' },
        402: {
          description:
            "Mainnets: the prepaid balance not held by signed operations or other deploys does not cover the deploy's maximum charge; nothing changed",
        },
        429: {
          description:
            "The merchant has queued YIELD_DEPLOYS_PER_MERCHANT_PER_DAY deploys this UTC day, the chain's platform-wide daily deploy budget is spent, or the deployment failed less than YIELD_REDEPLOY_BACKOFF_SEC ago (Retry-After)",
        },
        503: {
          description:
            "The chain's gas fees (or, on a mainnet, a fresh ETH/USD price) cannot be read, or Temporal did not accept the workflow in time; nothing changed",
        },
      },
      async handler({ merchantId, params }) {
        const row = await requireDeployment(app, merchantId, params.id);
        const from: YieldDeploymentStatus[] = ['draft', 'failed'];
        const network = requireYieldNetwork(app, row.chain_id);
        if (!from.includes(row.status)) throw wrongState(row, 'deploying', from);
        // Each deploy costs the platform gas: per-merchant daily limit, a back-off after a failure, the chain's
        // daily budget, and on a mainnet a hold on the merchant's prepaid balance.
        const charge = await deployChargeTermsNow(app, row, network);
        const now = app.now();
        const taken = await queueYieldDeploy(app.db, {
          merchantId,
          id: row.id,
          now,
          dailyLimit: app.config.YIELD_DEPLOYS_PER_MERCHANT_PER_DAY,
          backoffSec: app.config.YIELD_REDEPLOY_BACKOFF_SEC,
          charge,
          budget: {
            deploysPerDay: app.config.YIELD_DEPLOYS_PER_CHAIN_PER_DAY,
            weiPerDay: app.config.YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY,
          },
        });
        if (taken.outcome === 'not_found') throw yieldDeploymentNotFound();
        if (taken.outcome === 'wrong_state') throw wrongState(taken.row, 'deploying', from);
        if (taken.outcome === 'backing_off') {
          throw new HttpError(
            429,
            `Yield deployment failed less than ${app.config.YIELD_REDEPLOY_BACKOFF_SEC} s ago; retry after ${taken.retryAfterSec} s`,
            { 'retry-after': String(taken.retryAfterSec) },
          );
        }
        if (taken.outcome === 'daily_limit') {
          throw new HttpError(
            429,
            `Too many vault deploys today: ${app.config.YIELD_DEPLOYS_PER_MERCHANT_PER_DAY} per merchant per UTC day; retry after the UTC day ends`,
            { 'retry-after': String(taken.retryAfterSec) },
          );
        }
        if (taken.outcome === 'platform_budget') {
          throw new HttpError(
            429,
            `Too many vault deploys today on chain ${row.chain_id}: the platform's daily deploy budget is spent; retry after the UTC day ends`,
            { 'retry-after': String(taken.retryAfterSec) },
          );
        }
        if (taken.outcome === 'prepaid_balance') {
          throw new HttpError(
            402,
            `Prepaid balance too low for a vault deploy on chain ${row.chain_id}: it may cost up to ${microUsdToFixed6(charge.prepaid!.maxChargeMicro)} USD (markup included) and ${microUsdToFixed6(taken.availableMicro)} USD is available; top up the prepaid balance and deploy again`,
          );
        }
        const queued = taken.row;
        try {
          await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
            startYieldDeploymentWorkflow(app.temporal, {
              deploymentId: row.id,
              merchantId,
              chainId: row.chain_id,
              sandbox: network.network.testnet,
              taskQueue: app.taskQueues.yield,
            }),
          );
        } catch (error) {
          // Not queued after all: give back what it took (its charge first, while it is still deploying), then
          // put it back, so the merchant can simply ask again.
          await returnYieldDeploy(app.db, { merchantId, deploymentId: row.id, now });
          await transitionYieldDeployment(app.db, {
            merchantId,
            id: row.id,
            from: ['deploying'],
            to: row.status,
            changes: { failure_reason: row.failure_reason },
          });
          throw error;
        }
        return { status: 202, body: await present(app, queued) };
      },
    }),
  ];
}
