import type { YieldDeploymentStatus } from '../../../../db/schema';
import { transitionYieldDeployment } from '../../../../db/yieldDeployments';
import type { AppContext } from '../../../appContext';
import { defineRoute, type AnyRoute } from '../../../routing/route';
import { deployment } from '../yieldModels';
import {
  DEPLOYMENT_ROUTE,
  idParams,
  present,
  requireDeployment,
  wrongState,
  YIELD_BASE,
} from './deploymentAccess';

/** Retiring an active deployment (its site offers withdrawals only) and bringing it back. */
export function yieldSunsetRoutes(app: AppContext): AnyRoute[] {
  const common = DEPLOYMENT_ROUTE;
  /** Applies a transition or explains why not: 404 for a foreign id, 409 for a wrong state. */
  const transition = async (
    merchantId: string,
    id: string,
    action: string,
    step: { from: YieldDeploymentStatus[]; to: YieldDeploymentStatus; sunsetAt: 'set' | 'clear' },
  ) => {
    const row = await requireDeployment(app, merchantId, id);
    const moved = await transitionYieldDeployment(app.db, {
      merchantId,
      id,
      from: step.from,
      to: step.to,
      changes: { sunset_at: step.sunsetAt === 'set' ? app.now() : null },
    });
    if (!moved) throw wrongState(row, action, step.from);
    return { status: 200, body: await present(app, moved) };
  };

  return [
    defineRoute({
      ...common,
      method: 'post',
      path: `${YIELD_BASE}/:id/sunset`,
      summary: 'Retire an active deployment: its site offers withdrawals only',
      params: idParams,
      responses: {
        200: { description: 'Sunset', schema: deployment },
        404: { description: 'Unknown id' },
        409: { description: 'Not active' },
      },
      handler: ({ merchantId, params }) =>
        transition(merchantId, params.id, 'sunsetting', { from: ['active'], to: 'sunset', sunsetAt: 'set' }),
    }),

    defineRoute({
      ...common,
      method: 'delete',
      path: `${YIELD_BASE}/:id/sunset`,
      summary: 'Return a sunset deployment to the active list',
      params: idParams,
      responses: {
        200: { description: 'Active again', schema: deployment },
        404: { description: 'Unknown id' },
        409: { description: 'Not sunset' },
      },
      handler: ({ merchantId, params }) =>
        transition(merchantId, params.id, 'un-sunsetting', {
          from: ['sunset'],
          to: 'active',
          sunsetAt: 'clear',
        }),
    }),
  ];
}
