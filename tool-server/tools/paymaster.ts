import { z } from 'zod';
import { PAYMASTER_USAGE_STATUSES } from '../../db/paymasterUsageStatus';
import { accountName, describeChanges } from '../personConfirmation';
import { type AnyToolDefinition, routeTool, segment, without } from '../toolDefinition';
import { PAGE_SIZES, pageSizeText } from '../../config/pageSizes';

/**
 * | list_paymaster_clients  | GET    /v1/paymaster/clients        |
 * | create_paymaster_client | POST   /v1/paymaster/clients        | confirmed by the person |
 * | update_paymaster_client | PATCH  /v1/paymaster/clients/{id}   | confirmed by the person, unless only the label changes |
 * | revoke_paymaster_client | DELETE /v1/paymaster/clients/{id}   |
 * | list_allowlist          | GET    /v1/paymaster/allowlist      |
 * | add_allowlist_entry     | POST   /v1/paymaster/allowlist      | confirmed by the person |
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
      'Create a paymaster client: a publishable pmc_live_/pmc_test_ id for the paymaster RPC and bundler (needs the person’s confirmation).',
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
    confirmation: async (input, { credentials }) =>
      `Create a ${input.environment ?? 'test'} paymaster client ${JSON.stringify(input.label)} for ${await accountName(credentials)} (${describeChanges({ gasMode: input.gasMode ?? 'sponsored', allowedChainIds: input.allowedChainIds, allowedOrigins: input.allowedOrigins ?? [], userPaidMaxOperationUsd: input.userPaidMaxOperationUsd })}); whoever holds its public pmc_ id can have the merchant’s paymaster sign operations, sponsored ones at the merchant’s cost${input.allowedOrigins?.length ? '' : ', from any origin'}`,
  }),

  routeTool({
    name: 'update_paymaster_client',
    description:
      'Change a paymaster client’s label, origins, chains, gas mode or per-operation cap on user-paid gas (anything but the label needs the person’s confirmation).',
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
    // A label is the merchant's own note; every other field decides who may spend what.
    confirmation: async ({ id, label: _label, ...changes }, { credentials }) => {
      const described = describeChanges(changes);
      return described && `Change paymaster client ${id} of ${await accountName(credentials)}: ${described}`;
    },
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
      'Allow sponsored calls to a contract on a chain (replaces the entry of the same chain and address; needs the person’s confirmation).',
    inputSchema: { chainId: z.number().int(), contractAddress: z.string(), label: z.string().optional() },
    auth: 'jwt',
    method: 'POST',
    path: '/v1/paymaster/allowlist',
    body: (input) => input,
    confirmation: async ({ chainId, contractAddress, label }, { credentials }) =>
      `Allow sponsored calls to contract ${contractAddress} on chain ${chainId}${label === undefined ? '' : ` (labelled ${JSON.stringify(label)})`} for ${await accountName(credentials)}: the merchant then pays the gas of sponsored operations calling it`,
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
      limit: z.number().int().optional().describe(pageSizeText(PAGE_SIZES.standard)),
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
