import { z } from 'zod';
import { type AnyToolDefinition, defineTool, routeTool } from '../toolDefinition';
import { ToolFailure } from '../toolResults';

/**
 * | login_start  | POST /v1/auth/email/start  | mails a code to the merchant's verified e-mail |
 * | login_verify | POST /v1/auth/email/verify | stores the session token (never shown)        |
 * | logout       | POST /v1/auth/logout       | revokes the token, forgets it and the sk_ key |
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
      'Finish signing in with the 6-digit code from the e-mail. The session token is kept in the credentials file (mode 0600) and never shown.',
    inputSchema: { email, code: z.string().describe('The 6-digit code from the e-mail') },
    annotations: { openWorldHint: false },
    async run({ email: address, code }, { api, credentials }) {
      // SPEC's prefix for a code that cannot be one, rather than the API's 400 for a malformed body.
      if (!/^\d{6}$/.test(code.trim()))
        throw new ToolFailure('the code must be the 6 digits from the e-mail', 'OTP_INVALID');
      const { body } = await api.call({
        method: 'POST',
        path: '/v1/auth/email/verify',
        auth: 'none',
        body: { email: address, code: code.trim() },
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
      'Sign out: the API revokes the session token, and this machine forgets it and the remembered sk_ API key (the key stays valid until revoked). Session keys are kept.',
    inputSchema: {},
    annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run(_input, { api, credentials }) {
      const { session } = await credentials.read();
      if (session && Date.parse(session.expiresAt) > Date.now()) {
        // A token the API already refuses (401) is as good as revoked: forget it all the same.
        await api.call({ method: 'POST', path: '/v1/auth/logout', auth: 'jwt' }).catch((error: unknown) => {
          if (!(error instanceof ToolFailure && error.prefix === 'RE_AUTH_REQUIRED')) throw error;
        });
      }
      await credentials.update(({ session: _session, apiKey: _apiKey, ...rest }) => rest);
      return { signedOut: true };
    },
  }),
];
