import type { Selectable } from 'kysely';
import type { Db } from './client';
import type { MerchantsTable } from './schema';

export type MerchantRow = Selectable<MerchantsTable>;

/** Creates the merchant keyed by its login wallet, or touches it on a repeated login. */
export async function upsertMerchantByWallet(
  db: Db,
  { walletAddress, payoutAddress }: { walletAddress: string; payoutAddress: string },
): Promise<MerchantRow> {
  return db
    .insertInto('merchants')
    .values({ wallet_address: walletAddress.toLowerCase(), payout_address: payoutAddress })
    .onConflict((conflict) => conflict.column('wallet_address').doUpdateSet({ updated_at: new Date() }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findMerchantById(db: Db, id: string): Promise<MerchantRow | undefined> {
  return db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface MerchantProfileUpdate {
  name?: string | null;
  email?: string | null;
  payoutAddress?: string;
}

export async function updateMerchantProfile(
  db: Db,
  id: string,
  update: MerchantProfileUpdate,
): Promise<MerchantRow | undefined> {
  return db
    .updateTable('merchants')
    .set({
      ...(update.name !== undefined && { name: update.name }),
      ...(update.email !== undefined && { email: update.email }),
      ...(update.payoutAddress !== undefined && { payout_address: update.payoutAddress }),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
