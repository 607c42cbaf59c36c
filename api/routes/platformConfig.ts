import { getAddress } from 'viem';
import { z } from 'zod';
import { subscriptionChains } from '../../subscriptions/executorChains';
import type { AppContext } from '../appContext';
import { defineRoute, type AnyRoute } from '../routing/route';

/**
 * | GET | /v1/config | none | 200 what a customer's wallet needs to know of this deployment |
 *
 * Public facts only: per chain where subscriptions can be charged, the subscription executor (the delegate
 * a periodic permission must name), the Delegation Framework contracts a permission is built on, and the
 * stablecoins (docs/operations.md "Subscriptions").
 */

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);

export const subscriptionChainSchema = z
  .object({
    chainId: z.number().int(),
    network: z.string(),
    testnet: z.boolean().describe('Testnet chains carry sandbox plans'),
    subscriptionExecutor: address.describe(
      'The delegate of every periodic permission on this chain: it sends each period’s charge',
    ),
    delegationManager: address,
    erc20PeriodTransferEnforcer: address,
    timestampEnforcer: address,
    tokens: z.array(z.object({ symbol: z.string(), address, decimals: z.number().int() }).strict()),
  })
  .strict()
  .meta({ id: 'SubscriptionChain' });

const platformConfigSchema = z
  .object({
    subscriptionChains: z
      .array(subscriptionChainSchema)
      .describe(
        'Chains where customers can subscribe; empty when this deployment has no subscription executor',
      ),
  })
  .strict()
  .meta({ id: 'PlatformConfig' });

export function platformConfigRoutes(app: AppContext): AnyRoute[] {
  const executor = app.config.SUBSCRIPTION_EXECUTOR_ADDRESS
    ? getAddress(app.config.SUBSCRIPTION_EXECUTOR_ADDRESS)
    : undefined;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/config',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: 'Subscriptions',
      audience: 'dashboard',
      summary: 'Public facts of this deployment: the subscription executor and its contracts per chain',
      responses: { 200: { description: 'Configuration', schema: platformConfigSchema } },
      handler() {
        return {
          status: 200,
          body: {
            subscriptionChains: subscriptionChains(app.networks, executor).map((chain) => ({
              chainId: chain.network.chainId,
              network: chain.network.network,
              testnet: chain.network.testnet,
              subscriptionExecutor: chain.executor,
              delegationManager: chain.framework.delegationManager,
              erc20PeriodTransferEnforcer: chain.framework.erc20PeriodTransferEnforcer,
              timestampEnforcer: chain.framework.timestampEnforcer,
              tokens: chain.tokens.map((token) => ({
                symbol: token.symbol,
                address: token.address,
                decimals: token.decimals,
              })),
            })),
          },
        };
      },
    }),
  ];
}
