import { z } from 'zod';
import { redeemDashboardSignInCode } from '../../db/dashboardSignInCodes';
import { findMerchantById } from '../../db/merchants';
import type { AppContext } from '../appContext';
import { unauthorized } from '../httpErrors';
import { defineRoute, type AnyRoute } from '../routing/route';
import { loginResult, loginResultSchema } from './loginResult';

/**
 * | POST | /v1/auth/sign-in-code | none | 200 JWT for the code's merchant; 401 unknown, used or expired |
 *
 * The exchange of a dashboard sign-in link's one-time code (security review III, finding 3). No route
 * issues codes: only the dev stack writes one (dev/dashboardSignInLink.ts, with database access), so
 * where nothing issues them this route can only refuse. A code is 32 random bytes: not guessable; the route
 * still shares the login routes' per-IP allowance.
 */
const body = z
  .object({
    code: z
      .string({ error: 'is required' })
      .regex(/^dsc_[A-Za-z0-9_-]{43}$/, 'must be the code of a dashboard sign-in link'),
  })
  .strict()
  .meta({ id: 'SignInCodeExchange' });

const refusals = {
  unknown: 'Sign-in code is not valid',
  used: 'Sign-in code was already used; get a new link',
  expired: 'Sign-in code has expired (a link works for a minute); get a new link',
} as const;

export function signInCodeRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/auth/sign-in-code',
      auth: 'none',
      // A login route like the others: the per-IP login allowance bounds how fast codes can be tried.
      perIpLimit: 'login',
      tag: 'Login',
      audience: 'dashboard',
      summary: 'Exchange a dashboard sign-in link’s one-time code for a merchant session token',
      body,
      responses: {
        200: { description: 'Merchant session token', schema: loginResultSchema },
        400: { description: 'code missing or not the shape of a sign-in code' },
        401: { description: 'Code unknown, already used or expired (a minute after issue)' },
      },
      async handler({ body: { code } }) {
        const redeemed = await redeemDashboardSignInCode(app.db, { code, now: app.now() });
        if (redeemed.outcome !== 'accepted') throw unauthorized(refusals[redeemed.outcome]);
        const merchant = await findMerchantById(app.db, redeemed.merchantId);
        // The row cascades away with its merchant: a missing one is a code nobody can use.
        if (!merchant) throw unauthorized(refusals.unknown);
        return { status: 200, body: await loginResult(app.tokens, merchant) };
      },
    }),
  ];
}
