import { z } from 'zod';
import { accountName, confirmationTokenInput as confirmationToken } from '../personConfirmation';
import { type AnyToolDefinition, defineTool, routeTool, segment } from '../toolDefinition';

/**
 * | get_profile    | GET    /v1/merchants/me               |
 * | update_profile | PATCH  /v1/merchants/me               | a payout address needs the person's confirmation |
 * | list_api_keys  | GET    /v1/merchants/me/api-keys      |
 * | create_api_key | POST   /v1/merchants/me/api-keys      | confirmed by the person; the raw key is shown once and remembered |
 * | revoke_api_key | DELETE /v1/merchants/me/api-keys/{id} |
 */
export const accountTools: AnyToolDefinition[] = [
  routeTool({
    name: 'get_profile',
    description: 'Read the merchant profile (name, e-mail and whether it is verified, payout address).',
    inputSchema: {},
    auth: 'jwt',
    method: 'GET',
    path: '/v1/merchants/me',
  }),

  defineTool({
    name: 'update_profile',
    description:
      'Update name, e-mail or payout address; null clears name or e-mail. A new e-mail is unverified until the code mailed to it is confirmed. A new payout address needs the person’s confirmation.',
    inputSchema: {
      name: z.string().nullable().optional(),
      email: z.string().nullable().optional(),
      payoutAddress: z.string().optional().describe('0x address that receives settlement (sUSDe)'),
      confirmationToken,
    },
    annotations: { openWorldHint: false },
    async run(input, { api, credentials, confirm }) {
      const { confirmationToken: _token, ...body } = input;
      if (body.payoutAddress !== undefined) {
        const confirmation = await confirm({
          tool: 'update_profile',
          input,
          action: `Change the payout address (where settlements are paid) of ${await accountName(credentials)} to ${body.payoutAddress}`,
        });
        if (!confirmation.confirmed) return confirmation.pending;
      }
      const { body: profile } = await api.call({
        method: 'PATCH',
        path: '/v1/merchants/me',
        auth: 'jwt',
        body,
      });
      return profile;
    },
  }),

  routeTool({
    name: 'list_api_keys',
    description: 'List the secret API keys (prefix and hash only, never the raw key).',
    inputSchema: {},
    auth: 'jwt',
    method: 'GET',
    path: '/v1/merchants/me/api-keys',
  }),

  defineTool({
    name: 'create_api_key',
    description:
      'Create a secret sk_ API key (needs the person’s confirmation). The raw key is returned this once and remembered as this server’s key for the webhook tools.',
    inputSchema: { label: z.string().optional(), confirmationToken },
    annotations: { openWorldHint: false },
    async run(input, { api, credentials, confirm }) {
      const { label } = input;
      const confirmation = await confirm({
        tool: 'create_api_key',
        input,
        action: `Create a secret API key${label === undefined ? '' : ` labelled ${JSON.stringify(label)}`} for ${await accountName(credentials)}; it acts with the merchant’s authority until revoked`,
      });
      if (!confirmation.confirmed) return confirmation.pending;
      const { body } = await api.call({
        method: 'POST',
        path: '/v1/merchants/me/api-keys',
        auth: 'jwt',
        body: label === undefined ? {} : { label },
      });
      const created = body as { id: string; rawKey: string };
      await credentials.update((stored) => ({
        ...stored,
        apiKey: { id: created.id, rawKey: created.rawKey },
      }));
      return body;
    },
  }),

  defineTool({
    name: 'revoke_api_key',
    description: 'Revoke a secret API key by id; if it is the remembered key, it is forgotten too.',
    inputSchema: { id: z.string() },
    annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run({ id }, { api, credentials }) {
      const { body } = await api.call({
        method: 'DELETE',
        path: `/v1/merchants/me/api-keys/${segment(id)}`,
        auth: 'jwt',
      });
      await credentials.update(({ apiKey, ...rest }) => (apiKey?.id === id ? rest : { ...rest, apiKey }));
      return body;
    },
  }),
];
