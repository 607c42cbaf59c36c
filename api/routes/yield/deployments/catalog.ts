import { z } from 'zod';
import { listContractSets } from '../../../../db/yieldDeployments';
import { requiredChainIdQuery } from '../../../routing/chainIdQuery';
import { defineRoute, type AnyRoute } from '../../../routing/route';
import type { AppContext } from '../../../appContext';
import { contractSet, toContractSet } from '../yieldModels';
import { DEPLOYMENT_ROUTE, requireYieldNetwork, YIELD_BASE } from './deploymentAccess';

/** What a network offers before any deployment: its vault factory and tokens, and the merchant's deployed sets. */

const requiredChainId = z.object({ chainId: requiredChainIdQuery });

const deployOptions = z
  .object({
    chainId: z.number(),
    network: z.string(),
    sandbox: z.boolean(),
    vaultFactory: z.string(),
    permittedTokens: z.array(z.object({ symbol: z.string(), address: z.string(), decimals: z.number() })),
  })
  .meta({ id: 'YieldDeployOptions' });

export function yieldCatalogRoutes(app: AppContext): AnyRoute[] {
  const common = DEPLOYMENT_ROUTE;
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
  ];
}
