import type { Db } from './client';

/** Where inserts into session_token_revocations are announced (migration 660's trigger); payload: `<id> <expiry epoch ms>`. */
export const SESSION_TOKEN_REVOCATIONS_CHANNEL = 'session_token_revocations';

/** Lists a signed-out token until it expires; a second logout of the same token changes nothing. */
export async function revokeSessionToken(
  db: Db,
  { tokenId, merchantId, expiresAt }: { tokenId: string; merchantId: string; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('session_token_revocations')
    .values({ token_id: tokenId, merchant_id: merchantId, expires_at: expiresAt })
    .onConflict((conflict) => conflict.column('token_id').doNothing())
    .execute();
}

export async function isSessionTokenRevoked(db: Db, tokenId: string): Promise<boolean> {
  const row = await db
    .selectFrom('session_token_revocations')
    .select('token_id')
    .where('token_id', '=', tokenId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Every listed token not yet expired at `now`, with its expiry. */
export async function listLiveSessionTokenRevocations(
  db: Db,
  now: Date,
): Promise<{ token_id: string; expires_at: Date }[]> {
  return db
    .selectFrom('session_token_revocations')
    .select(['token_id', 'expires_at'])
    .where('expires_at', '>', now)
    .execute();
}

/** Deletes the revocations of tokens that expired before `cutoff` (an expired token is refused anyway). */
export async function deleteSessionTokenRevocationsExpiredBefore(db: Db, cutoff: Date): Promise<number> {
  const { numDeletedRows } = await db
    .deleteFrom('session_token_revocations')
    .where('expires_at', '<', cutoff)
    .executeTakeFirstOrThrow();
  return Number(numDeletedRows);
}
