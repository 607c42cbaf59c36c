import { z } from 'zod';
import { accountName, describeChanges } from '../personConfirmation';
import { type AnyToolDefinition, routeTool, segment, without } from '../toolDefinition';

/**
 * A paymaster client's sponsorship policies (issue 43), base `/v1/paymaster/clients/{clientId}/policies`:
 * | list_paymaster_policies  | GET    (collection)     |
 * | get_paymaster_policy     | GET    /{policyId}      |
 * | create_paymaster_policy  | POST   (collection)     | confirmed by the person |
 * | update_paymaster_policy  | PATCH  /{policyId}      | confirmed by the person, unless only the name changes |
 * | delete_paymaster_policy  | DELETE /{policyId}      |
 * | order_paymaster_policies | PUT    /order           |
 * Deleting or reordering never widens what is sponsored (the first passing policy sponsors; an
 * operation every policy refuses stays refused): no confirmation.
 */
const clientId = z
  .string()
  .describe('the paymaster client’s id (not its pmc_ id), from list_paymaster_clients');
const rules = {
  chainIds: z.array(z.number().int()).nullable().optional().describe('null: every chain of the client'),
  allowlist: z
    .array(z.object({ chainId: z.number().int(), contractAddress: z.string(), label: z.string().optional() }))
    .nullable()
    .optional()
    .describe('the policy’s own contract allowlist; null: the merchant’s shared allowlist'),
  startsAt: z.string().nullable().optional().describe('ISO 8601; the policy sponsors from then'),
  endsAt: z.string().nullable().optional().describe('ISO 8601; the policy sponsors until then (excluded)'),
  budgets: z
    .array(
      z.object({
        kind: z.enum(['usd', 'operations']),
        amount: z.string().describe('decimal USD, or a whole number of operations'),
        period: z.enum(['day', 'week', 'month', 'lifetime']),
        scope: z.enum(['policy', 'sender']),
      }),
    )
    .optional(),
  approvalWebhook: z
    .object({
      url: z.string(),
      timeoutMs: z.number().int().optional().describe('at most 5000, default 2000'),
      onError: z.enum(['deny', 'allow']).optional().describe('default deny'),
    })
    .nullable()
    .optional(),
};
const policiesPath = (id: string) => `/v1/paymaster/clients/${segment(id)}/policies`;

export const paymasterPolicyTools: AnyToolDefinition[] = [
  routeTool({
    name: 'list_paymaster_policies',
    description:
      'List a paymaster client’s sponsorship policies in the order they are tried (the first that passes sponsors).',
    inputSchema: { clientId },
    auth: 'jwt',
    method: 'GET',
    path: ({ clientId: id }) => policiesPath(id),
  }),

  routeTool({
    name: 'get_paymaster_policy',
    description:
      'Read one sponsorship policy: its position, chains, allowlist, window (startsAt, endsAt), budgets by period and scope, and approval webhook.',
    inputSchema: { clientId, policyId: z.string() },
    auth: 'jwt',
    method: 'GET',
    path: ({ clientId: id, policyId }) => `${policiesPath(id)}/${segment(policyId)}`,
  }),

  routeTool({
    name: 'create_paymaster_policy',
    description:
      'Add a sponsorship policy after a client’s last one: chains, allowlist, window, budgets, approval webhook (needs the person’s confirmation).',
    inputSchema: { clientId, name: z.string(), ...rules },
    auth: 'jwt',
    method: 'POST',
    path: ({ clientId: id }) => policiesPath(id),
    body: (input) => without(input, 'clientId'),
    confirmation: async ({ clientId: id, name, ...changes }, { credentials }) =>
      `Add sponsorship policy ${JSON.stringify(name)} to paymaster client ${id} of ${await accountName(credentials)} (${describeChanges(changes) || 'every chain of the client, the shared allowlist'}): operations it passes are sponsored at the merchant’s cost`,
  }),

  routeTool({
    name: 'update_paymaster_policy',
    description:
      'Change a sponsorship policy’s name, chains, allowlist, window, budgets (USD or operations per day, week, month or lifetime, for the policy or per sender; the list given replaces the old one) or approval webhook (anything but the name needs the person’s confirmation).',
    inputSchema: { clientId, policyId: z.string(), name: z.string().optional(), ...rules },
    auth: 'jwt',
    method: 'PATCH',
    path: ({ clientId: id, policyId }) => `${policiesPath(id)}/${segment(policyId)}`,
    body: (input) => without(input, 'clientId', 'policyId'),
    // A name is the merchant's own note; every other field decides what is sponsored.
    confirmation: async ({ clientId: id, policyId, name: _name, ...changes }, { credentials }) => {
      const described = describeChanges(changes);
      return (
        described &&
        `Change sponsorship policy ${policyId} of paymaster client ${id} of ${await accountName(credentials)}: ${described}`
      );
    },
  }),

  routeTool({
    name: 'delete_paymaster_policy',
    description:
      'Delete a sponsorship policy; the later ones move up. A client without policies sponsors nothing.',
    inputSchema: { clientId, policyId: z.string() },
    auth: 'jwt',
    method: 'DELETE',
    path: ({ clientId: id, policyId }) => `${policiesPath(id)}/${segment(policyId)}`,
    emptyResult: ({ policyId }) => ({ id: policyId, deleted: true }),
    annotations: { destructiveHint: true },
  }),

  routeTool({
    name: 'order_paymaster_policies',
    description:
      'Set the order of a client’s sponsorship policies: policyIds names every policy once, first tried first.',
    inputSchema: { clientId, policyIds: z.array(z.string()) },
    auth: 'jwt',
    method: 'PUT',
    path: ({ clientId: id }) => `${policiesPath(id)}/order`,
    body: ({ policyIds }) => ({ policyIds }),
  }),
];
