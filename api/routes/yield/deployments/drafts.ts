import { z } from 'zod';
import {
  deleteDraftYieldDeployment,
  insertYieldDeployment,
  listYieldDeployments,
  updateYieldDeploymentDetails,
} from '../../../../db/yieldDeployments';
import type { AppContext } from '../../../appContext';
import { invalidField } from '../../../httpErrors';
import { defineRoute, type AnyRoute } from '../../../routing/route';
import { branding, deployment } from '../yieldModels';
import {
  DEPLOYMENT_ROUTE,
  idParams,
  present,
  presentDeployments,
  requireDeployment,
  requireYieldNetwork,
  wrongState,
  YIELD_BASE,
  yieldDeploymentNotFound,
} from './deploymentAccess';

/** A deployment's record: listed, created as a draft, read, renamed or rebranded, and deleted while a draft. */

const createBody = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100),
    chainId: z.number().int().positive(),
    tokens: z
      .array(z.string().min(1))
      .min(1, 'must name at least one token')
      .refine((tokens) => new Set(tokens).size === tokens.length, 'must not repeat a token')
      .optional(),
    branding: branding.optional(),
  })
  .strict()
  .meta({ id: 'YieldDeploymentCreate' });

const patchBody = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100).optional(),
    branding: branding.optional(),
  })
  .strict()
  .refine((body) => body.name !== undefined || body.branding !== undefined, 'name or branding is required')
  .meta({ id: 'YieldDeploymentUpdate' });

export function yieldDraftRoutes(app: AppContext): AnyRoute[] {
  const common = DEPLOYMENT_ROUTE;
  return [
    defineRoute({
      ...common,
      method: 'get',
      path: YIELD_BASE,
      summary: 'List yield deployments, newest first',
      responses: { 200: { description: 'Deployments', schema: z.object({ data: z.array(deployment) }) } },
      async handler({ merchantId }) {
        const rows = await listYieldDeployments(app.db, merchantId);
        return { status: 200, body: { data: await presentDeployments(app, rows) } };
      },
    }),

    defineRoute({
      ...common,
      method: 'post',
      path: YIELD_BASE,
      summary: 'Create a draft yield deployment (tokens default to every permitted token)',
      body: createBody,
      responses: { 201: { description: 'The draft', schema: deployment } },
      async handler({ merchantId, body }) {
        const { permittedTokens } = requireYieldNetwork(app, body.chainId);
        const permitted: string[] = permittedTokens.map((token) => token.symbol);
        const unknown = (body.tokens ?? []).filter((symbol) => !permitted.includes(symbol));
        if (unknown.length > 0) {
          throw invalidField(
            'tokens',
            `${unknown.join(', ')} not permitted on chain ${body.chainId} (permitted: ${permitted.join(', ')})`,
          );
        }
        const row = await insertYieldDeployment(app.db, {
          merchantId,
          name: body.name,
          chainId: body.chainId,
          tokens: body.tokens ?? permitted,
          branding: body.branding ?? {},
        });
        return { status: 201, body: await present(app, row) };
      },
    }),

    defineRoute({
      ...common,
      method: 'get',
      path: `${YIELD_BASE}/:id`,
      summary: 'Get a yield deployment',
      params: idParams,
      responses: {
        200: { description: 'The deployment', schema: deployment },
        404: { description: 'Unknown id' },
      },
      async handler({ merchantId, params }) {
        return { status: 200, body: await present(app, await requireDeployment(app, merchantId, params.id)) };
      },
    }),

    defineRoute({
      ...common,
      method: 'patch',
      path: `${YIELD_BASE}/:id`,
      summary: 'Update the name or branding (branding replaces the whole object)',
      params: idParams,
      body: patchBody,
      responses: {
        200: { description: 'The deployment', schema: deployment },
        404: { description: 'Unknown id' },
      },
      async handler({ merchantId, params, body }) {
        const row = await updateYieldDeploymentDetails(app.db, merchantId, params.id, body);
        if (!row) throw yieldDeploymentNotFound();
        return { status: 200, body: await present(app, row) };
      },
    }),

    defineRoute({
      ...common,
      method: 'delete',
      path: `${YIELD_BASE}/:id`,
      summary: 'Delete a draft',
      params: idParams,
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'Unknown id' },
        409: { description: 'Not a draft' },
      },
      async handler({ merchantId, params }) {
        const row = await requireDeployment(app, merchantId, params.id);
        if (!(await deleteDraftYieldDeployment(app.db, merchantId, params.id))) {
          throw wrongState(row, 'deleting', ['draft']);
        }
        return { status: 204 };
      },
    }),
  ];
}
