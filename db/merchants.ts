import { sql, type Selectable } from 'kysely';
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
  /** Set with `email`: whether the new value is verified (a changed address is not). */
  emailVerifiedAt?: Date | null;
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
      ...(update.emailVerifiedAt !== undefined && { email_verified_at: update.emailVerifiedAt }),
      ...(update.payoutAddress !== undefined && { payout_address: update.payoutAddress }),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** The merchant whose verified e-mail is `email` (compared in lower case), if any. */
export async function findMerchantByVerifiedEmail(db: Db, email: string): Promise<MerchantRow | undefined> {
  return db
    .selectFrom('merchants')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('email_verified_at', 'is not', null)
    .executeTakeFirst();
}

/** Reads the merchant and locks its row until the end of `db`'s transaction. */
export async function lockMerchant(db: Db, id: string): Promise<MerchantRow | undefined> {
  return db.selectFrom('merchants').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Another merchant has already verified this e-mail address. */
export class VerifiedEmailTakenError extends Error {
  override name = 'VerifiedEmailTakenError';
  constructor() {
    super('E-mail address is already verified by another merchant');
  }
}

/**
 * Marks the merchant's e-mail verified when it still is `email` (lower case); undefined when it changed
 * meanwhile. The unique index on verified e-mails makes a second merchant's verification of the same
 * address fail atomically with VerifiedEmailTakenError.
 */
export async function markEmailVerified(
  db: Db,
  { merchantId, email, now }: { merchantId: string; email: string; now: Date },
): Promise<MerchantRow | undefined> {
  try {
    return await db
      .updateTable('merchants')
      .set({ email_verified_at: now, updated_at: now })
      .where('id', '=', merchantId)
      .where(sql<string>`lower(email)`, '=', email.toLowerCase())
      .returningAll()
      .executeTakeFirst();
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new VerifiedEmailTakenError();
    throw error;
  }
}
