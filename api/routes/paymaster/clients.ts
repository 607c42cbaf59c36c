import { z } from 'zod';
import {
  insertPaymasterClient,
  listActivePaymasterClients,
  revokePaymasterClient,
  updatePaymasterClient,
  type PaymasterClientRow,
} from '../../../db/paymasterClients';
import { generateClientId } from '../../../paymaster/policy/clientIds';
import { normaliseOrigin } from '../../../paymaster/policy/origins';
import type { AppContext } from '../../appContext';
import { notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { idParams, supportedChainId } from './fields';
import { usdLimit } from './limits';
import { microToUsd, usdToMicro } from '../../../money/microUsd';

/**
 * | GET    | /v1/paymaster/clients      | 200 list |
 * | POST   | /v1/paymaster/clients      | label, allowedOrigins, allowedChainIds (gasMode also settable) → 201 `{client}` |
 * | PATCH  | /v1/paymaster/clients/{id} | label, origins, chains (and gasMode) → 200 client summary |
 *
 * `userPaidMaxOperationUsd` (create and PATCH, null = the platform default): the most one user-paid
 * operation may cost its sender in USD, the token charge's ceiling (issue 26, finding 8).
 * | DELETE | /v1/paymaster/clients/{id} | 200 client summary (revoked); the id is unknown from then on |
 */

const origin = z
  .string()
  .max(300)
  .refine(
    (value) => normaliseOrigin(value) !== undefined,
    'must be an http(s) origin such as https://app.example.com (no path)',
  )
  .transform((value) => normaliseOrigin(value)!);
const unique = <T>(values: T[]) => [...new Set(values)];
const allowedOrigins = z.array(origin).max(50).transform(unique);
const allowedChainIds = z.array(supportedChainId).min(1, 'must list at least one chain').transform(unique);
const gasMode = z.enum(['sponsored', 'user_paid', 'both']);
const label = z.string().trim().min(1, 'must not be empty').max(100);
const userPaidMaxOperationUsd = usdLimit
  .nullable()
  .describe(
    'The most one user-paid (ERC-20) operation may cost its sender, in USD; null: the platform default (PAYMASTER_USER_PAID_MAX_OPERATION_USD)',
  );

const createBody = z
  .object({
    label,
    environment: z.enum(['live', 'test']).default('test'),
    allowedChainIds,
    allowedOrigins: allowedOrigins.default([]),
    gasMode: gasMode.default('sponsored'),
    userPaidMaxOperationUsd: userPaidMaxOperationUsd.default(null),
  })
  .strict()
  .meta({ id: 'PaymasterClientCreate' });

const updateBody = z
  .object({
    label: label.optional(),
    allowedOrigins: allowedOrigins.optional(),
    allowedChainIds: allowedChainIds.optional(),
    gasMode: gasMode.optional(),
    userPaidMaxOperationUsd: userPaidMaxOperationUsd.optional(),
  })
  .strict()
  .refine(
    (body) => Object.keys(body).length > 0,
    'give at least one of label, allowedOrigins, allowedChainIds, gasMode, userPaidMaxOperationUsd',
  )
  .meta({ id: 'PaymasterClientUpdate' });

const clientSummary = z
  .object({
    id: z.string(),
    clientId: z
      .string()
      .describe('Publishable id for X-Client-Id: pmc_live_ (mainnets) or pmc_test_ (testnets)'),
    label: z.string(),
    environment: z.enum(['live', 'test']),
    allowedOrigins: z.array(z.string()),
    allowedChainIds: z.array(z.number()),
    gasMode,
    userPaidMaxOperationUsd: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'PaymasterClient' });

function toSummary(row: PaymasterClientRow): z.infer<typeof clientSummary> {
  return {
    id: row.id,
    clientId: row.client_id,
    label: row.label,
    environment: row.environment,
    allowedOrigins: row.allowed_origins,
    allowedChainIds: row.allowed_chain_ids,
    gasMode: row.gas_mode,
    userPaidMaxOperationUsd:
      row.user_paid_max_operation_usd === null
        ? null
        : microToUsd(usdToMicro(row.user_paid_max_operation_usd)),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

export function paymasterClientRoutes(app: AppContext): AnyRoute[] {
  const common = { auth: 'jwt', tag: 'Paymaster clients', audience: 'dashboard' } as const;
  return [
    defineRoute({
      ...common,
      method: 'get',
      path: '/v1/paymaster/clients',
      summary: 'List paymaster clients (revoked ones are gone)',
      responses: { 200: { description: 'Clients', schema: z.object({ data: z.array(clientSummary) }) } },
      async handler({ merchantId }) {
        return {
          status: 200,
          body: { data: (await listActivePaymasterClients(app.db, merchantId)).map(toSummary) },
        };
      },
    }),

    defineRoute({
      ...common,
      method: 'post',
      path: '/v1/paymaster/clients',
      summary: 'Create a paymaster client; its id prefix follows environment (pmc_live_ / pmc_test_)',
      body: createBody,
      responses: { 201: { description: 'Created client', schema: z.object({ client: clientSummary }) } },
      async handler({ merchantId, body }) {
        const row = await insertPaymasterClient(app.db, {
          merchantId,
          clientId: generateClientId(body.environment),
          environment: body.environment,
          label: body.label,
          allowedOrigins: body.allowedOrigins,
          allowedChainIds: body.allowedChainIds,
          gasMode: body.gasMode,
          userPaidMaxOperationUsd: body.userPaidMaxOperationUsd,
        });
        return { status: 201, body: { client: toSummary(row) } };
      },
    }),

    defineRoute({
      ...common,
      method: 'patch',
      path: '/v1/paymaster/clients/:id',
      summary: 'Update label, allowed origins, allowed chains or gas mode',
      params: idParams,
      body: updateBody,
      responses: {
        200: { description: 'Updated client', schema: clientSummary },
        404: { description: 'Unknown or revoked client' },
      },
      async handler({ merchantId, params, body }) {
        const row = await updatePaymasterClient(app.db, merchantId, params.id, body);
        if (!row) throw notFound('Paymaster client not found');
        // This process at once; the trigger's notification reaches the others.
        app.paymasterClients.invalidate(row.client_id);
        return { status: 200, body: toSummary(row) };
      },
    }),

    defineRoute({
      ...common,
      method: 'delete',
      path: '/v1/paymaster/clients/:id',
      summary: 'Revoke a paymaster client: its id stops authenticating at once',
      params: idParams,
      responses: {
        200: { description: 'Revoked client', schema: clientSummary },
        404: { description: 'Unknown or already revoked client' },
      },
      async handler({ merchantId, params }) {
        const row = await revokePaymasterClient(app.db, merchantId, params.id);
        if (!row) throw notFound('Paymaster client not found');
        // This process at once; the trigger's notification reaches the others.
        app.paymasterClients.invalidate(row.client_id);
        return { status: 200, body: toSummary(row) };
      },
    }),
  ];
}
