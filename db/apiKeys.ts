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

/**
 * The merchant owning an active key with this hash, found through the unique hash index, in one
 * round trip that also records the last use (at most once a minute, so hot keys do not write per request).
 */
export async function authenticateApiKeyHash(db: Db, keyHash: string): Promise<string | undefined> {
  const result = await sql<{ merchant_id: string }>`
    WITH active AS (
      SELECT id, merchant_id, last_used_at FROM api_keys WHERE key_hash = ${keyHash} AND revoked_at IS NULL
    ), touched AS (
      UPDATE api_keys SET last_used_at = now()
      FROM active
      WHERE api_keys.id = active.id
        AND (active.last_used_at IS NULL OR active.last_used_at < now() - interval '1 minute')
    )
    SELECT merchant_id FROM active`.execute(db);
  return result.rows[0]?.merchant_id;
}
