import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { ApiKeysTable } from './schema';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export async function insertApiKey(
  db: Db,
  key: { merchantId: string; label: string | null; prefix: string; keyHash: string },
): Promise<ApiKeyRow> {
  return db
    .insertInto('api_keys')
    .values({ merchant_id: key.merchantId, label: key.label, prefix: key.prefix, key_hash: key.keyHash })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listApiKeys(db: Db, merchantId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .execute();
}

/** Revokes the merchant's key (idempotent: a second call keeps the first revocation time). */
export async function revokeApiKey(db: Db, merchantId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: sql`coalesce(revoked_at, now())` })
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}

/** The channel the api_keys trigger announces a changed key's hash on (migration 610). */
export const API_KEY_CHANGES_CHANNEL = 'api_key_changes';

/** An active key, as authentication needs it. */
export interface ActiveApiKey {
  id: string;
  merchantId: string;
}

/**
 * The active key with this hash and its merchant, found through the unique hash index, in one round trip
 * that also records the last use (at most once a minute, so hot keys do not write per request).
 */
export async function findActiveApiKeyByHash(db: Db, keyHash: string): Promise<ActiveApiKey | undefined> {
  const result = await sql<{ id: string; merchant_id: string }>`
    WITH active AS (
      SELECT id, merchant_id, last_used_at FROM api_keys WHERE key_hash = ${keyHash} AND revoked_at IS NULL
    ), touched AS (
      UPDATE api_keys SET last_used_at = now()
      FROM active
      WHERE api_keys.id = active.id
        AND (active.last_used_at IS NULL OR active.last_used_at < now() - interval '1 minute')
    )
    SELECT id, merchant_id FROM active`.execute(db);
  const row = result.rows[0];
  return row && { id: row.id, merchantId: row.merchant_id };
}

/** The merchant owning an active key with this hash (recording the last use, as findActiveApiKeyByHash). */
export async function authenticateApiKeyHash(db: Db, keyHash: string): Promise<string | undefined> {
  return (await findActiveApiKeyByHash(db, keyHash))?.merchantId;
}

/** Records a use of an active key served without a lookup (at most once a minute, like the lookup). */
export async function touchApiKeyLastUsed(db: Db, id: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql`now()` })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('last_used_at', 'is', null),
        eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`),
      ]),
    )
    .execute();
}
