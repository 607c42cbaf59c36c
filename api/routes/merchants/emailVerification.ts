import { z } from 'zod';
import { VerifiedEmailTakenError, markEmailVerified } from '../../../db/merchants';
import type { AppContext } from '../../appContext';
import { emailCodeField, otpError } from '../../auth/otpErrors';
import { conflict } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { merchantProfileSchema, toMerchantProfile } from './profileModel';

/**
 * | POST | /v1/merchants/me/email/verify | JWT | 200 profile (e-mail verified); 400 otp_invalid / otp_expired; 409 verified by another merchant |
 */
const verifyEmailBody = z
  .object({
    code: emailCodeField,
  })
  .strict()
  .meta({ id: 'EmailVerification' });

export function emailVerificationRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/merchants/me/email/verify',
      auth: 'jwt',
      tag: 'Merchant account',
      audience: 'dashboard',
      summary: 'Confirm the profile e-mail with the code mailed to it; a verified e-mail can sign in',
      body: verifyEmailBody,
      responses: {
        200: { description: 'Profile with the e-mail verified', schema: merchantProfileSchema },
        400: {
          description:
            'Malformed, or the code was refused: then the body adds `code`, `otp_invalid` (wrong, used, replaced or a sixth try) or `otp_expired` (older than 10 minutes)',
        },
        409: { description: 'Another merchant has already verified this e-mail address' },
      },
      async handler({ merchantId, body }) {
        const now = app.now();
        const attempt = await app.emailCodes.attempt(app.db, {
          purpose: 'verify_email',
          subject: merchantId,
          code: body.code,
          now,
        });
        if (attempt.outcome !== 'accepted') throw otpError(400, attempt);
        try {
          const verified = await markEmailVerified(app.db, { merchantId, email: attempt.email, now });
          // The profile e-mail changed after the code was mailed: the code belonged to the old address.
          if (!verified) throw otpError(400, { outcome: 'none' });
          return { status: 200, body: toMerchantProfile(verified) };
        } catch (error) {
          if (error instanceof VerifiedEmailTakenError) throw conflict(error.message);
          throw error;
        }
      },
    }),
  ];
}
