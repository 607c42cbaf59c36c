import { getAddress } from 'viem';
import { z } from 'zod';
import type { MerchantRow } from '../../../db/merchants';

export const merchantProfileSchema = z
  .object({
    id: z.string().uuid(),
    walletAddress: z.string().describe('Checksummed login wallet address; the account key'),
    name: z.string().nullable(),
    email: z.string().nullable(),
    emailVerified: z
      .boolean()
      .describe('True once the e-mail was confirmed with a mailed code; only a verified e-mail signs in'),
    payoutAddress: z.string().describe('Where settlement (sUSDe) is delivered; defaults to the login wallet'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'MerchantProfile' });

export type MerchantProfile = z.infer<typeof merchantProfileSchema>;

export function toMerchantProfile(row: MerchantRow): MerchantProfile {
  return {
    id: row.id,
    walletAddress: getAddress(row.wallet_address),
    name: row.name,
    email: row.email,
    emailVerified: row.email !== null && row.email_verified_at !== null,
    payoutAddress: row.payout_address,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
