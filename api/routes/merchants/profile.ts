import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { deleteEmailCode } from '../../../db/emailCodes';
import {
  findMerchantById,
  lockMerchant,
  updateMerchantProfile,
  type MerchantRow,
} from '../../../db/merchants';
import { normaliseEmail } from '../../auth/emailCodes';
import { verificationCodeMail } from '../../email/codeMails';
import { takeCodeSendAllowance } from '../../email/codeSendLimits';
import type { AppContext } from '../../appContext';
import { unauthorized } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { merchantProfileSchema, toMerchantProfile } from './profileModel';

/**
 * | GET   | /v1/merchants/me                | 200 profile |
 * | PATCH | /v1/merchants/me                | 200 profile; a new e-mail is unverified and gets a mailed code |
 * Smart accounts: smartAccounts.ts.
 */
export const checksummedAddress = z
  .string()
  .refine((value) => isAddress(value, { strict: false }), 'must be a 0x address')
  .transform((value) => getAddress(value));

const profileUpdate = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(200).nullable().optional(),
    email: z.string().trim().email('must be an e-mail address').max(320).nullable().optional(),
    payoutAddress: checksummedAddress
      .refine(
        (value) => value !== '0x0000000000000000000000000000000000000000',
        'must not be the zero address',
      )
      .optional(),
  })
  .strict()
  .meta({ id: 'MerchantProfileUpdate' });

/**
 * What a PATCH does to the e-mail: `unchanged` (absent, or the verified address again, case aside),
 * `cleared` (null), or `unverified` (a new address, or the current one still unverified: a code is mailed).
 */
function emailChange(
  current: MerchantRow,
  email: string | null | undefined,
): 'unchanged' | 'cleared' | 'unverified' {
  if (email === undefined) return 'unchanged';
  if (email === null) return 'cleared';
  const same = current.email !== null && normaliseEmail(current.email) === normaliseEmail(email);
  return same && current.email_verified_at !== null ? 'unchanged' : 'unverified';
}

/** The signed-in merchant; a valid token for a merchant that no longer exists is an unknown credential. */
export async function loadSignedInMerchant(app: AppContext, merchantId: string): Promise<MerchantRow> {
  const merchant = await findMerchantById(app.db, merchantId);
  if (!merchant) throw unauthorized('Unknown merchant');
  return merchant;
}

export function profileRoutes(app: AppContext): AnyRoute[] {
  const loadMerchant = (merchantId: string) => loadSignedInMerchant(app, merchantId);

  return [
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me',
      auth: 'jwt',
      tag: 'Merchant account',
      audience: 'dashboard',
      summary: 'Read the merchant profile',
      responses: { 200: { description: 'Profile', schema: merchantProfileSchema } },
      async handler({ merchantId }) {
        return { status: 200, body: toMerchantProfile(await loadMerchant(merchantId)) };
      },
    }),

    defineRoute({
      method: 'patch',
      path: '/v1/merchants/me',
      auth: 'jwt',
      tag: 'Merchant account',
      audience: 'dashboard',
      summary: 'Update name, e-mail or payout address',
      body: profileUpdate,
      responses: {
        200: {
          description:
            'Updated profile. A new or unverified e-mail is stored unverified and gets a 6-digit code by mail ' +
            '(confirm it with POST /v1/merchants/me/email/verify); null clears it.',
          schema: merchantProfileSchema,
        },
        400: { description: 'Validation failed' },
        429: { description: 'Too many e-mail codes for this address or client IP this hour (Retry-After)' },
      },
      async handler({ merchantId, body, ctx }) {
        const now = app.now();
        const { merchant, mailCode } = await app.db.transaction().execute(async (trx) => {
          const current = await lockMerchant(trx, merchantId);
          if (!current) throw unauthorized('Unknown merchant');
          const change = emailChange(current, body.email);
          let code: string | undefined;
          if (change === 'unverified' && app.mailer.configured) {
            // Counted and stored with the update: a refusal (429) leaves the profile as it was.
            await takeCodeSendAllowance(trx, { email: body.email!, ip: ctx.ip, now, config: app.config });
            code = await app.emailCodes.issue(trx, {
              purpose: 'verify_email',
              subject: merchantId,
              email: body.email!,
              merchantId,
              now,
            });
          } else if (change !== 'unchanged') {
            await deleteEmailCode(trx, { purpose: 'verify_email', subject: merchantId });
          }
          const updated = await updateMerchantProfile(trx, merchantId, {
            ...body,
            ...(change !== 'unchanged' && { emailVerifiedAt: null }),
          });
          return { merchant: updated!, mailCode: code };
        });
        if (mailCode !== undefined) {
          const to = body.email!;
          app.mailer.dispatch(async () => verificationCodeMail({ to, code: mailCode }));
        } else if (body.email && !merchant.email_verified_at) {
          app.logger.warn('no SMTP_URL: the e-mail is stored unverified and no code was mailed');
        }
        return { status: 200, body: toMerchantProfile(merchant) };
      },
    }),
  ];
}
