import { z } from 'zod';
import { type AnyToolDefinition, defineTool, routeTool } from '../toolDefinition';

/**
 * | login_start  | POST /v1/auth/email/start  | mails a code to the merchant's verified e-mail |
 * | login_verify | POST /v1/auth/email/verify | stores the session token (never shown)        |
 * | logout       | (local)                    | forgets the token and the remembered sk_ key  |
 */
const email = z.string().describe('The merchant’s verified profile e-mail');

export const loginTools: AnyToolDefinition[] = [
  routeTool({
    name: 'login_start',
    description:
      'Start signing in: mails a 6-digit code to the merchant’s verified e-mail (the answer is the same for an unknown address). Then call login_verify with the code.',
    inputSchema: { email },
    auth: 'none',
    method: 'POST',
    path: '/v1/auth/email/start',
    body: (input) => input,
  }),

  defineTool({
    name: 'login_verify',
    description:
      'Finish signing in with the 6-digit code from the e-mail. The session token is kept in the credentials file (mode 0600) and never shown. Replacing a signed-in account with another needs the person’s confirmation.',
    inputSchema: {
      email,
      code: z.string().describe('The 6-digit code from the e-mail'),
      confirmationToken: z
        .string()
        .optional()
        .describe('Only after the person agreed to switch accounts: the token a first call answered'),
    },
    annotations: { openWorldHint: false },
    async run(input, { api, credentials, confirm }) {
      const { email: address, code } = input;
      // Signing in as another account than the one signed in is the person's decision (finding 4).
      const { session } = await credentials.read();
      if (session && session.email?.toLowerCase() !== address.trim().toLowerCase()) {
        const confirmation = await confirm({
          tool: 'login_verify',
          input,
          action: `Sign this tool server in as ${address}, replacing the signed-in account ${session.email ?? session.merchantId}`,
        });
        if (!confirmation.confirmed) return confirmation.pending;
      }
      const { body } = await api.call({
        method: 'POST',
        path: '/v1/auth/email/verify',
        auth: 'none',
        body: { email: address, code },
      });
      const login = body as {
        token: string;
        expiresAt: string;
        merchant: { id: string; email: string | null };
      };
      await credentials.update((stored) => ({
        ...stored,
        session: {
          token: login.token,
          expiresAt: login.expiresAt,
          merchantId: login.merchant.id,
          email: login.merchant.email,
        },
      }));
      return { signedIn: true, expiresAt: login.expiresAt, merchant: login.merchant };
    },
  }),

  defineTool({
    name: 'logout',
    description:
      'Forget the session token and the remembered sk_ API key on this machine (the key stays valid until revoked). Session keys are kept.',
    inputSchema: {},
    annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run(_input, { credentials }) {
      await credentials.update(({ session: _session, apiKey: _apiKey, ...rest }) => rest);
      return { signedOut: true };
    },
  }),
];
