import { getAddress } from 'viem';
import { z } from 'zod';
import type { MerchantRow } from '../../db/merchants';
import type { MerchantTokenService } from '../auth/merchantTokens';
import { merchantProfileSchema, toMerchantProfile } from './merchants/profileModel';

/** What every successful login answers (wallet and e-mail alike): the session token and the merchant. */
export const loginResultSchema = z
  .object({ token: z.string(), expiresAt: z.string(), merchant: merchantProfileSchema })
  .meta({ id: 'LoginResult' });

export type LoginResult = z.infer<typeof loginResultSchema>;

/** Issues the merchant's session token and builds the login answer. */
export async function loginResult(tokens: MerchantTokenService, merchant: MerchantRow): Promise<LoginResult> {
  const { token, expiresAt } = await tokens.issue({
    id: merchant.id,
    walletAddress: getAddress(merchant.wallet_address),
  });
  return { token, expiresAt: expiresAt.toISOString(), merchant: toMerchantProfile(merchant) };
}
