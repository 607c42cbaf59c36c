import { z } from 'zod';
import { toPaymasterClient } from '../../../paymaster/policy/clientChecks';
import { dryRunPolicies } from '../../../paymaster/rpc/dryRunPolicies';
import { takeDryRun } from '../../../paymaster/rpc/validateSponsorshipPolicies';
import type { AppContext } from '../../appContext';
import { notFound, validationFailed } from '../../httpErrors';
import { tooManyRequests } from '../../rateLimits';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { idParams } from './fields';
import { dryRunDependencies } from './rpc';

/**
 * | POST | /v1/paymaster/clients/{id}/policies/dry-run | JWT | "Would this be sponsored?" |
 * The dashboard's form of pm_validateSponsorshipPolicies (paymaster/rpc/dryRunPolicies.ts): every
 * policy of the client with whether it would sponsor the operation now and, when not, why; the policy
 * that would sponsor it (the first in order that would). Consumes and records nothing but one of the
 * client's dry runs (PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE, shared with the RPC method): past them 429.
 */

const dryRunBody = z
  .object({
    userOperation: z
      .record(z.string(), z.unknown(), { error: 'must be a user operation object' })
      .describe('The user operation as a wallet would send it (v0.7/v0.8 unpacked fields)'),
    entryPoint: z.string({ error: 'must be a 0x address' }),
    chainId: z.union([z.number(), z.string()], { error: 'must be a chain id' }),
    policyIds: z.array(z.string().uuid()).max(100).optional(),
  })
  .strict()
  .meta({ id: 'PaymasterPolicyDryRun' });

const verdictModel = z.object({
  policyId: z.string(),
  name: z.string(),
  sponsors: z.boolean(),
  reason: z.string().nullable().describe('Why the policy would not sponsor it now; null when it would'),
  asksApproval: z
    .boolean()
    .describe('The policy asks its approval webhook when signing; a dry run does not ask it'),
});

const dryRunResult = z
  .object({
    wouldSponsor: z
      .object({ policyId: z.string(), name: z.string() })
      .nullable()
      .describe('The first policy in order that would sponsor it now; null: none would'),
    refusal: z
      .string()
      .nullable()
      .describe('What refuses the operation whichever policy (deny rule, chain, client limit…); null: none'),
    policies: z.array(verdictModel),
  })
  .meta({ id: 'PaymasterPolicyDryRunResult' });

/** `Invalid params: userOp.sender must be …` → the body field it names. */
function fieldOf(message: string): { field: string; message: string } {
  const detail = message.replace(/^Invalid params: /, '');
  const userOpField = /^userOp\.(\S+) (.*)$/.exec(detail);
  if (userOpField) return { field: `userOperation.${userOpField[1]}`, message: userOpField[2]! };
  const param = /^params\[(\d)\] \(\w+\) (.*)$/.exec(detail);
  if (param) {
    const field = ['userOperation', 'entryPoint', 'chainId'][Number(param[1])] ?? '';
    return { field, message: param[2]! };
  }
  return { field: '', message: detail };
}

export function paymasterPolicyDryRunRoutes(app: AppContext): AnyRoute[] {
  const deps = dryRunDependencies(app);
  return [
    defineRoute({
      auth: 'jwt',
      tag: 'Paymaster policies',
      audience: 'dashboard',
      method: 'post',
      path: '/v1/paymaster/clients/:id/policies/dry-run',
      summary: 'Would this operation be sponsored now? Every policy with why not; consumes nothing',
      params: idParams,
      body: dryRunBody,
      responses: {
        200: { description: 'Each policy and the one that would sponsor', schema: dryRunResult },
        400: { description: 'A malformed user operation, entry point or chain (the field named)' },
        404: { description: 'Unknown client' },
        429: { description: 'More than PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE (30) dry runs a minute' },
      },
      async handler({ merchantId, params, body }) {
        const row = await app.db
          .selectFrom('paymaster_clients')
          .selectAll()
          .where('id', '=', params.id)
          .where('merchant_id', '=', merchantId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (!row) throw notFound('Paymaster client not found');
        const client = toPaymasterClient(row);
        const retryAfterSec = await takeDryRun(deps.dryRuns, client.clientId);
        if (retryAfterSec !== undefined)
          throw tooManyRequests('dry runs for this paymaster client', retryAfterSec);
        const outcome = await dryRunPolicies({ ...deps, logger: app.logger }, client, {
          params: [body.userOperation, body.entryPoint, body.chainId],
          ...(body.policyIds && { policyIds: body.policyIds }),
        });
        if (!outcome.ok) throw validationFailed([fieldOf(outcome.denial.error.message)]);
        const first = outcome.policies.find((policy) => policy.sponsors);
        return {
          status: 200,
          body: {
            wouldSponsor: first ? { policyId: first.policyId, name: first.name } : null,
            refusal: outcome.refusal,
            policies: outcome.policies,
          },
        };
      },
    }),
  ];
}
