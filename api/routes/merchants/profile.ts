import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { claimSmartAccount } from '../../../db/smartAccounts';
import { findMerchantById, updateMerchantProfile } from '../../../db/merchants';
import type { AppContext } from '../../appContext';
import { conflict, unauthorized } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { merchantProfileSchema, toMerchantProfile } from './profileModel';

/**
 * | GET   | /v1/merchants/me                | 200 profile |
 * | PATCH | /v1/merchants/me                | 200 profile |
 * | POST  | /v1/merchants/me/smart-accounts | 204, idempotent; 409 when claimed by another merchant |
 */
const address = z
  .string()
  .refine((value) => isAddress(value, { strict: false }), 'must be a 0x address')
  .transform((value) => getAddress(value));

const profileUpdate = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(200).nullable().optional(),
    email: z.string().trim().email('must be an e-mail address').max(320).nullable().optional(),
    payoutAddress: address
      .refine(
        (value) => value !== '0x0000000000000000000000000000000000000000',
        'must not be the zero address',
      )
      .optional(),
  })
  .strict()
  .meta({ id: 'MerchantProfileUpdate' });

const smartAccountBody = z.object({ address }).strict().meta({ id: 'SmartAccountRegistration' });

export function profileRoutes(app: AppContext): AnyRoute[] {
  // A valid token for a merchant that no longer exists is an unknown credential.
  const loadMerchant = async (merchantId: string) => {
    const merchant = await findMerchantById(app.db, merchantId);
    if (!merchant) throw unauthorized('Unknown merchant');
    return merchant;
  };

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
        200: { description: 'Updated profile', schema: merchantProfileSchema },
        400: { description: 'Validation failed' },
      },
      async handler({ merchantId, body }) {
        const updated = await updateMerchantProfile(app.db, merchantId, body);
        if (!updated) throw unauthorized('Unknown merchant');
        return { status: 200, body: toMerchantProfile(updated) };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/merchants/me/smart-accounts',
      auth: 'jwt',
      tag: 'Merchant account',
      audience: 'dashboard',
      summary: 'Register a smart account as the merchant’s (idempotent)',
      body: smartAccountBody,
      responses: {
        204: { description: 'Registered (or already registered to this merchant)' },
        400: { description: 'Validation failed' },
        409: { description: 'Claimed by another merchant' },
      },
      async handler({ merchantId, body }) {
        await loadMerchant(merchantId);
        const outcome = await claimSmartAccount(app.db, merchantId, body.address);
        if (outcome === 'claimed_by_another')
          throw conflict('Smart account already claimed by another merchant');
        return { status: 204 };
      },
    }),
  ];
}
