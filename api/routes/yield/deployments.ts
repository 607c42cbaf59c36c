import { z } from 'zod';
import type { YieldDeploymentStatus } from '../../../db/schema';
import {
  deleteDraftYieldDeployment,
  findContractSets,
  findMerchantContractSet,
  findYieldDeployment,
  insertYieldDeployment,
  listContractSets,
  listYieldDeployments,
  transitionYieldDeployment,
  updateYieldDeploymentDetails,
  type YieldDeploymentRow,
} from '../../../db/yieldDeployments';
import { queueYieldDeploy, returnYieldDeploy } from '../../../db/yieldDeployLimits';
import { listYieldDomains } from '../../../db/yieldDomains';
import { yieldNetworkOf, type YieldNetwork } from '../../../yield/deployOptions';
import { microUsdToFixed6 } from '../../../money/microUsd';
import { deployChargeTermsNow } from './deployChargeTerms';
import { startYieldDeploymentWorkflow } from '../../../workflowClient/yieldWorkflows';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import type { AppContext } from '../../appContext';
import { HttpError, conflict, invalidField, notFound } from '../../httpErrors';
import { requiredChainIdQuery } from '../../routing/chainIdQuery';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { branding, contractSet, deployment, toContractSet, toDeployment } from './yieldModels';

/**
 * SPEC's yield-deployment table (JWT), base /v1/merchants/me/yield-deployments, with DESIGN §7.5's shapes:
 *
 * | GET    | /deploy-options   | network's vault factory and permitted tokens           | 200 |
 * | GET    | /contract-sets    | merchant's deployed contract sets on a network         | 200 |
 * | GET    | (collection)      | list deployments                                       | 200 |
 * | POST   | (collection)      | create a draft                                         | 201 |
 * | GET    | /{id}             | get one                                                | 200 |
 * | PATCH  | /{id}             | update name or branding                                | 200 |
 * | DELETE | /{id}             | delete a draft                                         | 204 |
 * | POST   | /{id}/contracts   | link an existing contract set: draft → active          | 200 |
 * | POST   | /{id}/deploy      | queue the vault deployment: draft | failed → deploying | 202 |
 * | POST   | /{id}/sunset      | active → sunset                                        | 200 |
 * | DELETE | /{id}/sunset      | sunset → active                                        | 200 |
 * (domains: ./domains.ts)
 *
 * A foreign or unknown id answers 404; a transition from the wrong state 409.
 */

export const YIELD_BASE = '/v1/merchants/me/yield-deployments';

const idParams = z.object({ id: z.string().uuid() });

const requiredChainId = z.object({ chainId: requiredChainIdQuery });

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

const linkBody = z.object({ contractSetId: z.string().uuid('must be a contract set id') }).strict();

const deployOptions = z
  .object({
    chainId: z.number(),
    network: z.string(),
    sandbox: z.boolean(),
    vaultFactory: z.string(),
    permittedTokens: z.array(z.object({ symbol: z.string(), address: z.string(), decimals: z.number() })),
  })
  .meta({ id: 'YieldDeployOptions' });

export const yieldDeploymentNotFound = () => notFound('Yield deployment not found');

function wrongState(row: YieldDeploymentRow, action: string, allowed: YieldDeploymentStatus[]) {
  return conflict(`Yield deployment is ${row.status}; ${action} needs ${allowed.join(' or ')}`);
}

/** The chain's yield facts, or a 400 naming the chain (unknown, or no vault factory there). */
export function requireYieldNetwork(app: AppContext, chainId: number): YieldNetwork {
  const found = yieldNetworkOf(app.networks.byChainId(chainId));
  if (!found) throw invalidField('chainId', `${chainId} has no yield vault deployment`);
  return found;
}

/** The merchant's deployment, or 404. */
export async function requireDeployment(app: AppContext, merchantId: string, id: string) {
  const row = await findYieldDeployment(app.db, merchantId, id);
  if (!row) throw yieldDeploymentNotFound();
  return row;
}

/** The response body of deployments, with their contract sets and domains. */
export async function presentDeployments(app: AppContext, rows: YieldDeploymentRow[]) {
  const setIds = rows.flatMap((row) => (row.contract_set_id ? [row.contract_set_id] : []));
  const [sets, domains] = await Promise.all([
    findContractSets(app.db, setIds),
    listYieldDomains(
      app.db,
      rows.map((row) => row.id),
    ),
  ]);
  return rows.map((row) =>
    toDeployment(row, {
      contractSet: sets.find((set) => set.id === row.contract_set_id),
      domains: domains.filter((entry) => entry.deployment_id === row.id),
      networks: app.networks,
      publicBaseUrl: app.config.PUBLIC_BASE_URL,
    }),
  );
}

async function present(app: AppContext, row: YieldDeploymentRow) {
  return (await presentDeployments(app, [row]))[0]!;
}

export function yieldDeploymentRoutes(app: AppContext): AnyRoute[] {
  const common = { auth: 'jwt', tag: 'Yield deployments', audience: 'dashboard' } as const;

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
      method: 'get',
      path: `${YIELD_BASE}/deploy-options`,
      summary: "A network's vault factory and the tokens a yield deployment may have vaults for",
      query: requiredChainId,
      responses: {
        200: { description: 'Deploy options', schema: deployOptions },
      },
      async handler({ query }) {
        // A staked vault with a withdrawal cooldown is offered too: the vault redeems asynchronously over it (ERC-7540).
        const { network, vaultFactory, permittedTokens } = requireYieldNetwork(app, query.chainId);
        return {
          status: 200,
          body: {
            chainId: network.chainId,
            network: network.network,
            sandbox: network.testnet,
            vaultFactory,
            permittedTokens: permittedTokens.map(({ symbol, address, decimals }) => ({
              symbol,
              address,
              decimals,
            })),
          },
        };
      },
    }),

    defineRoute({
      ...common,
      method: 'get',
      path: `${YIELD_BASE}/contract-sets`,
      summary: "The merchant's deployed vault sets on a network, newest first",
      query: requiredChainId,
      responses: { 200: { description: 'Contract sets', schema: z.object({ data: z.array(contractSet) }) } },
      async handler({ merchantId, query }) {
        requireYieldNetwork(app, query.chainId);
        const sets = await listContractSets(app.db, merchantId, query.chainId);
        return { status: 200, body: { data: sets.map(toContractSet) } };
      },
    }),

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
