import type { ExpressionBuilder } from 'kysely';
import type { Database } from './schema';
import type { Db } from './client';

export async function insertLoginNonce(
  db: Db,
  nonce: { nonce: string; address: string; chainId: number; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('login_nonces')
    .values({
      nonce: nonce.nonce,
      address: nonce.address.toLowerCase(),
      chain_id: nonce.chainId,
      expires_at: nonce.expiresAt,
    })
    .execute();
}

/**
 * Marks the nonce used if it was issued for this address and chain, is unused and unexpired.
 * One conditional UPDATE, so two concurrent verifications of the same nonce cannot both succeed.
 */
export async function consumeLoginNonce(
  db: Db,
  {
    nonce,
    address,
    chainId,
    now = new Date(),
  }: { nonce: string; address: string; chainId: number; now?: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('login_nonces')
    .set({ used_at: now })
    .where((eb) => usable(eb, { nonce, address, chainId, now }))
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * Whether the nonce was issued for this address and chain and is still unused and unexpired: a cheap
 * read made before the (possibly remote) signature check, which only a usable nonce deserves. The
 * nonce is consumed afterwards by `consumeLoginNonce`, atomically.
 */
export async function isLoginNonceUsable(
  db: Db,
  { nonce, address, chainId, now }: { nonce: string; address: string; chainId: number; now: Date },
): Promise<boolean> {
  const row = await db
    .selectFrom('login_nonces')
    .select('nonce')
    .where((eb) => usable(eb, { nonce, address, chainId, now }))
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes nonces that expired before `cutoff`; returns how many went (a deleted nonce was unusable already). */
export async function deleteLoginNoncesExpiredBefore(db: Db, cutoff: Date): Promise<number> {
  const { numDeletedRows } = await db
    .deleteFrom('login_nonces')
    .where('expires_at', '<', cutoff)
    .executeTakeFirstOrThrow();
  return Number(numDeletedRows);
}

/** Issued for this address and chain, not used, not expired at `now`. */
function usable(
  eb: ExpressionBuilder<Database, 'login_nonces'>,
  { nonce, address, chainId, now }: { nonce: string; address: string; chainId: number; now: Date },
) {
  return eb.and([
    eb('nonce', '=', nonce),
    eb('address', '=', address.toLowerCase()),
    eb('chain_id', '=', chainId),
    eb('used_at', 'is', null),
    eb('expires_at', '>', now),
  ]);
}
