import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../../api/auth/authenticate';
import { generateRawApiKey } from '../../api/routes/merchants/apiKeys';
import { insertApiKey } from '../../db/apiKeys';
import { createDb } from '../../db/client';
import { upsertMerchantByWallet } from '../../db/merchants';

/** A fresh merchant (payouts to its own wallet) and one active sk_live_ key, written through the repositories. */
export async function seedMerchantWithApiKey(
  databaseUrl: string,
): Promise<{ merchantId: string; rawKey: string }> {
  const db = createDb({ connectionString: databaseUrl, maxConnections: 1 });
  try {
    const wallet = `0x${randomBytes(20).toString('hex')}`;
    const merchant = await upsertMerchantByWallet(db, { walletAddress: wallet, payoutAddress: wallet });
    const rawKey = generateRawApiKey();
    // The display prefix the key route stores: `sk_live_` and the first 4 characters of the secret.
    await insertApiKey(db, {
      merchantId: merchant.id,
      label: 'bench',
      prefix: rawKey.slice(0, 'sk_live_'.length + 4),
      keyHash: hashApiKey(rawKey),
    });
    return { merchantId: merchant.id, rawKey };
  } finally {
    await db.destroy();
  }
}
