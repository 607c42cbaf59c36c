import { z } from 'zod';
import { findMerchantContractSet, transitionYieldDeployment } from '../../../../db/yieldDeployments';
import type { AppContext } from '../../../appContext';
import { invalidField, notFound } from '../../../httpErrors';
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

/** A draft put on contracts the merchant already has: linking a deployed set makes it active without a deploy. */

const linkBody = z.object({ contractSetId: z.string().uuid('must be a contract set id') }).strict();

export function yieldContractLinkRoutes(app: AppContext): AnyRoute[] {
  const common = DEPLOYMENT_ROUTE;
  return [
    defineRoute({
      ...common,
      method: 'post',
      path: `${YIELD_BASE}/:id/contracts`,
      summary: "Link one of the merchant's contract sets to an unconfigured draft, making it active",
      params: idParams,
      body: linkBody,
      responses: {
        200: { description: 'The active deployment', schema: deployment },
        400: { description: 'The set is on another chain' },
        404: { description: 'Unknown deployment or contract set' },
        409: { description: 'Not an unconfigured draft' },
      },
      async handler({ merchantId, params, body }) {
        const row = await requireDeployment(app, merchantId, params.id);
        const set = await findMerchantContractSet(app.db, merchantId, body.contractSetId);
        if (!set) throw notFound('Contract set not found');
        if (row.status !== 'draft' || row.contract_set_id !== null) {
          throw wrongState(row, 'linking a contract set', ['draft']);
        }
        if (set.chain_id !== row.chain_id) {
          throw invalidField(
            'contractSetId',
            `the set is on chain ${set.chain_id}, the deployment on ${row.chain_id}`,
          );
        }
        const linked = await transitionYieldDeployment(app.db, {
          merchantId,
          id: row.id,
          from: ['draft'],
          to: 'active',
          unconfigured: true,
          changes: { contract_set_id: set.id },
        });
        if (!linked)
          throw wrongState(await requireDeployment(app, merchantId, row.id), 'linking a contract set', [
            'draft',
          ]);
        return { status: 200, body: await present(app, linked) };
      },
    }),
  ];
}
