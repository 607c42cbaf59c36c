import { getAddress, type Hex } from 'viem';
import { z } from 'zod';
import { claimSmartAccount, listMerchantSmartAccounts } from '../../../db/smartAccounts';
import type { AppContext } from '../../appContext';
import { proveSmartAccountControl } from '../../auth/smartAccountProof';
import { conflict, forbidden, invalidField } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { checksummedAddress, loadSignedInMerchant } from './profile';

/**
 * | GET  | /v1/merchants/me/smart-accounts | 200 `{ data }`: the merchant's registered smart accounts, oldest first |
 * | POST | /v1/merchants/me/smart-accounts | 204, idempotent; 403 without the account's signature; 409 when claimed by another merchant |
 */
const smartAccountBody = z
  .object({
    address: checksummedAddress,
    chainId: z
      .number()
      .int()
      .positive()
      .describe('The chain whose RPC verifies the signature (where the account is deployed, or will be)'),
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]+$/, 'must be 0x hex')
      .describe(
        'The account’s signature (EIP-191 personal_sign, checked with ERC-1271, or ERC-6492 before deployment) of ' +
          '"StablePay: register smart account <address> on chain <chainId> for merchant <merchant id>"',
      ),
  })
  .strict()
  .meta({ id: 'SmartAccountRegistration' });

const smartAccountSchema = z
  .object({
    address: z.string().describe('Checksummed 0x address'),
    registeredAt: z.string(),
  })
  .strict()
  .meta({ id: 'SmartAccount' });

export function smartAccountRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/smart-accounts',
      auth: 'jwt',
      tag: 'Merchant account',
      audience: 'dashboard',
      summary: 'The merchant’s registered smart accounts, oldest first',
      responses: {
        200: {
          description: 'Registered smart accounts',
          schema: z.object({ data: z.array(smartAccountSchema) }),
        },
      },
      async handler({ merchantId }) {
        await loadSignedInMerchant(app, merchantId);
        const accounts = await listMerchantSmartAccounts(app.db, merchantId);
        return {
          status: 200,
          body: {
            data: accounts.map((account) => ({
              address: getAddress(account.address),
              registeredAt: account.created_at.toISOString(),
            })),
          },
        };
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
        403: { description: 'The signature does not prove control of the account' },
        409: { description: 'Claimed by another merchant' },
      },
      async handler({ merchantId, body }) {
        await loadSignedInMerchant(app, merchantId);
        // Control first: only the account itself may have it claimed (and learn whether someone has).
        const proof = await proveSmartAccountControl({
          publicClients: app.publicClients,
          merchantId,
          address: body.address,
          chainId: body.chainId,
          signature: body.signature as Hex,
        });
        if (proof === 'no_rpc')
          throw invalidField('chainId', `chain ${body.chainId} is not one this service reads`);
        if (proof === 'not_proven')
          throw forbidden('The signature does not prove control of the smart account');
        const outcome = await claimSmartAccount(app.db, merchantId, body.address);
        if (outcome === 'claimed_by_another')
          throw conflict('Smart account already claimed by another merchant');
        return { status: 204 };
      },
    }),
  ];
}
