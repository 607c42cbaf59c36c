import { z } from 'zod';
import { findMerchantById, findMerchantByVerifiedEmail } from '../../db/merchants';
import type { AppContext } from '../appContext';
import { normaliseEmail } from '../auth/emailCodes';
import { isEmailLoginLocked, tryLoginCode } from '../auth/emailLoginBudget';
import { emailCodeField, otpError, otpErrorSchema } from '../auth/otpErrors';
import { loginCodeMail } from '../email/codeMails';
import { takeCodeSendAllowance } from '../email/codeSendLimits';
import { serviceUnavailable } from '../httpErrors';
import { defineRoute, type AnyRoute } from '../routing/route';
import { loginResult, loginResultSchema } from './loginResult';

/**
 * | POST | /v1/auth/email/start  | none | 202 { sent: true } for any address (a known, verified, unlocked one gets a code); 429 |
 * | POST | /v1/auth/email/verify | none | 200 JWT; 401 with code otp_invalid or otp_expired |
 */
const email = z.string({ error: 'is required' }).trim().email('must be an e-mail address').max(320);

const startBody = z.object({ email }).strict().meta({ id: 'EmailLoginStart' });
const startResponse = z.object({ sent: z.literal(true) }).meta({ id: 'EmailLoginStarted' });

const verifyBody = z
  .object({
    email,
    code: emailCodeField,
  })
  .strict()
  .meta({ id: 'EmailLoginVerify' });

export function emailLoginRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/auth/email/start',
      auth: 'none',
      perIpLimit: 'login',
      tag: 'Login',
      audience: 'dashboard',
      summary:
        'Mail a 6-digit login code to a merchant’s verified e-mail (same answer for unknown addresses)',
      body: startBody,
      responses: {
        202: {
          description: 'Accepted; a code is on its way if the address is a verified login e-mail',
          schema: startResponse,
        },
        400: { description: 'Not an e-mail address' },
        429: {
          description:
            'Too many codes for this address, for it from this client IP, or from this client IP this hour (Retry-After)',
        },
        503: { description: 'No mail server is configured (SMTP_URL)' },
      },
      async handler({ body, ctx }) {
        if (!app.mailer.configured)
          throw serviceUnavailable('E-mail login is not available: no mail server is configured');
        const now = app.now();
        const address = normaliseEmail(body.email);
        // Known or not, the same rows are written: an unknown address gets a code that is never mailed and
        // can never succeed, so answers, timings and later verify answers do not tell the two apart.
        const issued = await app.db.transaction().execute(async (trx) => {
          await takeCodeSendAllowance(trx, { email: address, ip: ctx.ip, now, config: app.config });
          // A locked address gets no code (it could not be used); the answer is the same.
          if (await isEmailLoginLocked(trx, address)) return undefined;
          const merchant = await findMerchantByVerifiedEmail(trx, address);
          const code = await app.emailCodes.issue(trx, {
            purpose: 'login',
            subject: address,
            email: address,
            merchantId: merchant?.id ?? null,
            now,
          });
          return merchant ? { to: merchant.email!, code } : undefined;
        });
        app.mailer.dispatch(async () => (issued ? loginCodeMail(issued) : undefined));
        return { status: 202, body: { sent: true } };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/auth/email/verify',
      auth: 'none',
      perIpLimit: 'login',
      tag: 'Login',
      audience: 'dashboard',
      summary: 'Exchange an e-mailed login code for a merchant session token',
      body: verifyBody,
      responses: {
        200: { description: 'Merchant session token', schema: loginResultSchema },
        400: { description: 'email or code missing or malformed' },
        401: {
          description:
            'Code refused: `otp_invalid` (wrong, used, pushed out by 3 newer codes, unknown address, a sixth try, or the address locked after 10 wrong codes in 24 h until a wallet sign-in) or `otp_expired` (older than 10 minutes)',
          schema: otpErrorSchema,
        },
      },
      async handler({ body }) {
        const address = normaliseEmail(body.email);
        const attempt = await tryLoginCode(app, { address, code: body.code, now: app.now() });
        if (attempt.outcome !== 'accepted') throw otpError(401, attempt);
        // The code was mailed to the merchant's verified address; it must still be that address now.
        const merchant = await findMerchantById(app.db, attempt.merchantId);
        const stillVerified =
          merchant?.email_verified_at &&
          merchant.email !== null &&
          normaliseEmail(merchant.email) === address;
        if (!merchant || !stillVerified) throw otpError(401, { outcome: 'none' });
        return { status: 200, body: await loginResult(app.tokens, merchant) };
      },
    }),
  ];
}
