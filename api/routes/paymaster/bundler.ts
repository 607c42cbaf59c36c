import { z } from 'zod';
import { PAYMASTER_RELEASES } from '../../../chain/paymasters';
import type { PaymasterClient } from '../../../paymaster/policy/clientChecks';
import { type BundlerProxyDependencies, proxyBundlerRequest } from '../../../paymaster/bundler/bundlerProxy';
import type { AppContext } from '../../appContext';
import { badRequest } from '../../httpErrors';
import { type AnyRoute, defineRoute } from '../../routing/route';

/**
 * | POST | /v1/paymaster/bundler/{chainId} | CLIENT (X-Client-Id or query clientId; the header wins) |
 * |      | body: any ERC-4337 bundler JSON-RPC request → 200 the bundler's raw JSON-RPC response     |
 *
 * | status | body                                   | when |
 * | 401    | { statusCode, message, error }         | paymaster_unauthorized: client id missing, unknown or revoked |
 * | 403    | { statusCode, message, error }         | paymaster_origin_not_allowed: allowedOrigins set and Origin missing or unlisted |
 * | 400    | { statusCode, message, error }         | `Validation failed (numeric string is expected)`: chainId not an integer |
 * | 403    | { error: { message, type: 'error' } }  | paymaster_chain_not_allowed / paymaster_key_network_class_mismatch |
 * | 400    | { error: { message, type: 'error' } }  | the body is not JSON; an empty batch or one above 20 requests |
 * | 200    | JSON-RPC error -32601 (-32600 for the rest of a batch) | a method outside the relayed set (docs/paymaster.md "The bundler proxy (`POST /v1/paymaster/bundler/{chainId}`)"): never relayed |
 * | 403    | { error: { message, type: 'error' } }  | paymaster_gas_mode_not_allowed (an operation's mode on our paymaster) |
 * | 402    | { error: { message, type: 'error' } }  | paymaster_billing_balance_exhausted (sponsored, mainnet) |
 * | 502    | { error: { message, type: 'error' } }  | bundler upstream: non-2xx, non-JSON, or transport failure (its text) |
 *
 * The bundler's URL (BUNDLER_URL_<chainId>, which may hold the provider's key) never reaches the caller.
 */

const errorBody = z
  .object({ error: z.object({ message: z.string(), type: z.literal('error') }) })
  .meta({ id: 'BundlerProxyError' });

export function paymasterBundlerRoutes(app: AppContext): AnyRoute[] {
  const deps: BundlerProxyDependencies = {
    db: app.db,
    logger: app.logger,
    bundlerUrlFor: (chainId) =>
      (app.config as unknown as Record<string, string | undefined>)[`BUNDLER_URL_${chainId}`],
    paymastersOn: (chainId) => {
      const contracts = app.networks.byChainId(chainId)?.contracts ?? {};
      return Object.values(PAYMASTER_RELEASES).flatMap(({ contractKey }) =>
        contracts[contractKey] ? [contracts[contractKey]] : [],
      );
    },
  };
  return [
    defineRoute({
      method: 'post',
      path: '/v1/paymaster/bundler/:chainId',
      auth: 'client',
      tag: 'Paymaster',
      audience: 'integrator',
      summary: "Bundler JSON-RPC proxy: relays ERC-4337 bundler requests to the chain's bundler",
      params: z.object({ chainId: z.string().describe('Integer chain id, e.g. 84532') }),
      query: z.object({
        clientId: z.string().optional().describe('Client id when no X-Client-Id header is sent'),
      }),
      body: z.unknown().describe('Any ERC-4337 bundler JSON-RPC request, relayed as sent'),
      responses: {
        200: { description: "The bundler's JSON-RPC response, byte for byte" },
        400: { description: 'chainId is not an integer (framework body), or the body is not JSON' },
        401: { description: 'paymaster_unauthorized' },
        402: { description: 'paymaster_billing_balance_exhausted', schema: errorBody },
        403: {
          description:
            'paymaster_origin_not_allowed (framework body); paymaster_chain_not_allowed, paymaster_key_network_class_mismatch, paymaster_gas_mode_not_allowed',
          schema: errorBody,
        },
        429: {
          description:
            'paymaster_rate_limit_exceeded: the client’s request rate; Retry-After says when to retry',
          schema: errorBody,
        },
        502: { description: 'bundler upstream failure', schema: errorBody },
      },
      async handler({ params, ctx }) {
        // NestJS ParseIntPipe's wording and shape: SPEC asks for it right after the client-id check.
        if (!/^-?\d+$/.test(params.chainId))
          throw badRequest('Validation failed (numeric string is expected)', [
            { field: 'chainId', message: 'numeric string is expected' },
          ]);
        const outcome = await proxyBundlerRequest(
          { ...deps, logger: ctx.state.log ?? app.logger },
          {
            client: ctx.state.paymasterClient as PaymasterClient,
            chainId: Number(params.chainId),
            rawBody: (ctx.state.rawBody as Buffer | undefined) ?? Buffer.alloc(0),
          },
        );
        if (outcome.kind === 'denied') {
          return { status: outcome.status, body: { error: { message: outcome.message, type: 'error' } } };
        }
        if (outcome.kind === 'answered') return { status: 200, body: outcome.body };
        ctx.status = 200;
        ctx.type = 'application/json';
        ctx.body = outcome.body;
      },
    }),
  ];
}
