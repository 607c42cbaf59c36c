import type { Db } from './client';

export type ClaimSmartAccountResult = 'claimed' | 'already_yours' | 'claimed_by_another';

/**
 * Claims a smart account for a merchant. The address is the primary key, so of two merchants
 * claiming the same account concurrently exactly one insert succeeds; no read-then-write race.
 */
export async function claimSmartAccount(
  db: Db,
  merchantId: string,
  address: string,
): Promise<ClaimSmartAccountResult> {
  const normalised = address.toLowerCase();
  const inserted = await db
    .insertInto('smart_accounts')
    .values({ address: normalised, merchant_id: merchantId })
    .onConflict((conflict) => conflict.column('address').doNothing())
    .returning('address')
    .executeTakeFirst();
  if (inserted) return 'claimed';
  const owner = await db
    .selectFrom('smart_accounts')
    .select('merchant_id')
    .where('address', '=', normalised)
    .executeTakeFirstOrThrow();
  return owner.merchant_id === merchantId ? 'already_yours' : 'claimed_by_another';
}

/** The merchant's registered smart accounts (lower-case addresses), oldest first. */
export async function listMerchantSmartAccounts(
  db: Db,
  merchantId: string,
): Promise<{ address: string; created_at: Date }[]> {
  return db
    .selectFrom('smart_accounts')
    .select(['address', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .orderBy('address')
    .execute();
}
