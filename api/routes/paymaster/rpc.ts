import { z } from 'zod';
import { resolveDelegationFramework } from '../../../chain/delegationFramework';
import { paymasterFromContracts } from '../../../chain/paymasters';
import { delegationManagerFor } from '../../../paymaster/delegation/delegationManager';
import type { PaymasterClient } from '../../../paymaster/policy/clientChecks';
import { handlePaymasterRpc, type PaymasterRpcDependencies } from '../../../paymaster/rpc/handlePaymasterRpc';
import { createEthUsdPrices } from '../../../paymaster/pricing/prices';
import { PAYMASTER_METHODS } from '../../../paymaster/rpc/sponsorshipParams';
import { createUserPaidPricer } from '../../../paymaster/pricing/userPaidPricing';
import type { AppContext } from '../../appContext';
import type { DryRunDependencies } from '../../../paymaster/rpc/dryRunPolicies';
import { DRY_RUN_METHOD, type DryRunRate } from '../../../paymaster/rpc/validateSponsorshipPolicies';
import { HttpError } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';

/**
 * | POST | /v1/paymaster/rpc | CLIENT (X-Client-Id, Origin) | JSON-RPC 2.0: pm_getPaymasterStubData,
 * |      |                   |                              | pm_getPaymasterData, pm_sponsorUserOperation, |
 * |      |                   |                              | pm_validateSponsorshipPolicies (a dry run) |
 *
 * HTTP 401 paymaster_unauthorized (client id missing, unknown or revoked) and 403
 * paymaster_origin_not_allowed come from the client authenticator; HTTP 403 `Policy denied:
 * paymaster_chain_not_allowed` when params[2] names a chain outside allowedChainIds. Everything else
 * is a JSON-RPC response with HTTP 200, errors included (paymaster/rpc/handlePaymasterRpc.ts).
 */

const jsonRpcResponse = z
  .union([
    z.object({
      jsonrpc: z.literal('2.0'),
      id: z.union([z.string(), z.number()]),
      result: z.object({
        paymaster: z.string(),
        paymasterData: z.string(),
        paymasterVerificationGasLimit: z.string(),
        paymasterPostOpGasLimit: z.string(),
      }),
    }),
    z
      .object({
        jsonrpc: z.literal('2.0'),
        id: z.union([z.string(), z.number()]),
        result: z.array(z.object({ sponsorshipPolicyId: z.string(), data: z.object({ name: z.string() }) })),
      })
      .describe('pm_validateSponsorshipPolicies: the policies that would sponsor the operation now'),
    z.object({
      jsonrpc: z.literal('2.0'),
      id: z.union([z.string(), z.number(), z.null()]),
      error: z.object({ code: z.number(), message: z.string() }),
    }),
  ])
  .meta({ id: 'PaymasterRpcResponse' });

const jsonRpcRequest = z
  .unknown()
  .describe(
    `JSON-RPC 2.0 request { jsonrpc: "2.0", id, method, params: [userOp, entryPoint, chainId, context?] }; method one of ${PAYMASTER_METHODS.join(', ')}; or ${DRY_RUN_METHOD} with params [userOp, entryPoint, chainId, sponsorshipPolicyIds?] (a dry run: consumes nothing, records nothing, PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE per client). ` +
      'Read by the handler itself, so a malformed request answers JSON-RPC -32700 rather than HTTP 400.',
  );

/** What the dry run needs (the RPC's pm_validateSponsorshipPolicies and the dashboard's policy check). */
export function dryRunDependencies(app: AppContext): DryRunDependencies & { dryRuns: DryRunRate } {
  return {
    db: app.db,
    delegationManagerFor: (chainId) =>
      delegationManagerFor(app.config, chainId, app.networks.byChainId(chainId)?.contracts),
    caveatEnforcersFor: (chainId) =>
      resolveDelegationFramework(chainId, app.networks.byChainId(chainId)?.contracts),
    publicClientFor: (chainId) => app.publicClients.forChain(chainId),
    chainClocks: app.chainClocks,
    limits: app.sponsorshipLimits,
    dryRuns: {
      rate: app.requestRates.paymasterDryRuns,
      perMinute: app.config.PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE,
    },
    now: app.now,
    logger: app.logger,
  };
}

export function paymasterRpcRoutes(app: AppContext): AnyRoute[] {
  const deps: PaymasterRpcDependencies = {
    ...dryRunDependencies(app),
    signer: app.paymasterSigner,
    merchantConfigs: app.paymasterConfigs,
    paymasterFor: (chainId, version) =>
      paymasterFromContracts(app.networks.byChainId(chainId)?.contracts, version),
    approvals: {
      allowPrivateTargets: app.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      openSecret: (sealed, binding) => app.webhookSecrets.open(sealed, binding),
      now: app.now,
    },
    bounds: {
      chainFees: app.chainFees,
      feeBoundBps: app.config.PAYMASTER_FEE_BOUND_BPS,
      maxOperationGas: app.config.PAYMASTER_MAX_OPERATION_GAS,
    },
    userPaidPricer: createUserPaidPricer({
      config: app.config,
      prices: createEthUsdPrices({
        config: app.config,
        publicClients: app.publicClients,
        networks: app.networks,
        logger: app.logger,
      }),
      publicClients: app.publicClients,
      networks: app.networks,
      logger: app.logger,
    }),
  };
  return [
    defineRoute({
      method: 'post',
      path: '/v1/paymaster/rpc',
      auth: 'client',
      tag: 'Paymaster',
      audience: 'integrator',
      summary: 'Paymaster JSON-RPC (ERC-7677): stub data, signed paymaster data, sponsorship',
      body: jsonRpcRequest,
      responses: {
        200: {
          description: 'JSON-RPC response; JSON-RPC errors also answer HTTP 200',
          schema: jsonRpcResponse,
        },
        401: { description: 'paymaster_unauthorized: client id missing, unknown or revoked' },
        403: { description: 'paymaster_origin_not_allowed, or Policy denied: paymaster_chain_not_allowed' },
      },
      async handler({ ctx }) {
        const client = ctx.state.paymasterClient as PaymasterClient;
        // Bytes that were not JSON reach the handler as no body: the RPC answers -32700.
        const body = ctx.state.jsonParseFailed ? undefined : ctx.state.body;
        const outcome = await handlePaymasterRpc(
          { ...deps, logger: ctx.state.log ?? app.logger },
          { client, body },
        );
        if (outcome.kind === 'http') throw new HttpError(outcome.status, outcome.message);
        return { status: 200, body: outcome.response };
      },
    }),
  ];
}
