import { z } from 'zod';
import { PAYMASTER_USAGE_STATUSES } from '../../db/paymasterUsageStatus';
import { type AnyToolDefinition, routeTool, segment, without } from '../toolDefinition';

/**
 * | list_paymaster_clients  | GET    /v1/paymaster/clients        |
 * | create_paymaster_client | POST   /v1/paymaster/clients        |
 * | update_paymaster_client | PATCH  /v1/paymaster/clients/{id}   |
 * | revoke_paymaster_client | DELETE /v1/paymaster/clients/{id}   |
 * | list_allowlist          | GET    /v1/paymaster/allowlist      |
 * | add_allowlist_entry     | POST   /v1/paymaster/allowlist      |
 * | remove_allowlist_entry  | DELETE /v1/paymaster/allowlist/{id} |
 * | get_paymaster_usage     | GET    /v1/paymaster/usage          |
 */
const gasMode = z.enum(['sponsored', 'user_paid', 'both']);
const userPaidCap = z
  .string()
  .nullable()
  .describe(
    'the most one user-paid (ERC-20) operation may cost its sender, decimal USD; null: the platform default (50 USD)',
  );
const chainIds = z.array(z.number().int()).describe('EVM chain ids, e.g. [84532]');
const origins = z.array(z.string()).describe('allowed Origin values, e.g. ["https://app.example"]');

export const paymasterTools: AnyToolDefinition[] = [
  routeTool({
    name: 'list_paymaster_clients',
    description: 'List the paymaster clients (publishable pmc_ ids with their origins, chains and gas mode).',
    inputSchema: {},
    auth: 'jwt',
    method: 'GET',
    path: '/v1/paymaster/clients',
  }),

  routeTool({
    name: 'create_paymaster_client',
    description:
      'Create a paymaster client: a publishable pmc_live_/pmc_test_ id for the paymaster RPC and bundler.',
    inputSchema: {
      label: z.string(),
      environment: z.enum(['live', 'test']).optional().describe('default test'),
      allowedChainIds: chainIds,
      allowedOrigins: origins.optional(),
      gasMode: gasMode.optional().describe('default sponsored'),
      userPaidMaxOperationUsd: userPaidCap.optional(),
    },
    auth: 'jwt',
    method: 'POST',
    path: '/v1/paymaster/clients',
    body: (input) => input,
  }),

  routeTool({
    name: 'update_paymaster_client',
    description:
      'Change a paymaster client’s label, origins, chains, gas mode or per-operation cap on user-paid gas.',
    inputSchema: {
      id: z.string(),
      label: z.string().optional(),
      allowedOrigins: origins.optional(),
      allowedChainIds: chainIds.optional(),
      gasMode: gasMode.optional(),
      userPaidMaxOperationUsd: userPaidCap.optional(),
    },
    auth: 'jwt',
    method: 'PATCH',
    path: ({ id }) => `/v1/paymaster/clients/${segment(id)}`,
    body: (input) => without(input, 'id'),
  }),

  routeTool({
    name: 'revoke_paymaster_client',
    description: 'Revoke a paymaster client: its id stops authenticating at once.',
    inputSchema: { id: z.string() },
    auth: 'jwt',
    method: 'DELETE',
    path: ({ id }) => `/v1/paymaster/clients/${segment(id)}`,
    annotations: { destructiveHint: true },
  }),

  routeTool({
    name: 'list_allowlist',
    description: 'List the contracts the paymaster may sponsor calls to, per chain.',
    inputSchema: {},
    auth: 'jwt',
    method: 'GET',
    path: '/v1/paymaster/allowlist',
  }),

  routeTool({
    name: 'add_allowlist_entry',
    description:
      'Allow sponsored calls to a contract on a chain (replaces the entry of the same chain and address).',
    inputSchema: { chainId: z.number().int(), contractAddress: z.string(), label: z.string().optional() },
    auth: 'jwt',
    method: 'POST',
    path: '/v1/paymaster/allowlist',
    body: (input) => input,
  }),

  routeTool({
    name: 'remove_allowlist_entry',
    description: 'Remove a contract from the allowlist by entry id.',
    inputSchema: { id: z.string() },
    auth: 'jwt',
    method: 'DELETE',
    path: ({ id }) => `/v1/paymaster/allowlist/${segment(id)}`,
    emptyResult: ({ id }) => ({ id, removed: true }),
    annotations: { destructiveHint: true },
  }),

  routeTool({
    name: 'get_paymaster_usage',
    description:
      'Sponsorship usage records (signed operations and denials), newest first; pass nextCursor for more.',
    inputSchema: {
      limit: z.number().int().optional().describe('1 to 100, default 20'),
      cursor: z.string().optional(),
      clientId: z.string().optional(),
      chainId: z.number().int().optional(),
      mode: z.enum(['sponsored', 'user_paid']).optional(),
      status: z.enum(PAYMASTER_USAGE_STATUSES).optional(),
    },
    auth: 'jwt',
    method: 'GET',
    path: '/v1/paymaster/usage',
    query: (input) => input,
    // A usage row records a request from whoever holds the public client id.
    untrusted: [
      {
        paths: ['data.*.method', 'data.*.reason', 'data.*.sender', 'data.*.entryPoint', 'data.*.targets'],
        origin: 'whoever called the paymaster with the public client id',
      },
    ],
  }),
];
