import { sql, type Kysely } from 'kysely';

/**
 * One usage row per on-chain operation: `(chain_id, entry_point, user_op_hash)` is unique, so an
 * operation signed twice (identical requests in one second give one hash, even from two merchants) is
 * recorded, limited and charged once. A signed row keeps what it answered (`signed_result`) and the
 * fingerprint of the signing request, so a repeat is found before any limit is consumed and answered
 * with the stored result. Existing duplicates keep their first row; the others lose the hash and say
 * whose duplicate they were.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('paymaster_usage')
    .addColumn('request_fingerprint', 'text')
    .addColumn('signed_result', 'jsonb')
    .execute();

  await sql`
    WITH ranked AS (
      SELECT id, first_value(id) OVER same_operation AS first_id,
        row_number() OVER same_operation AS position
      FROM paymaster_usage
      WHERE user_op_hash IS NOT NULL
      WINDOW same_operation AS (PARTITION BY chain_id, entry_point, user_op_hash ORDER BY seq)
    )
    UPDATE paymaster_usage AS usage
    SET user_op_hash = NULL, reason = 'duplicate of ' || ranked.first_id
    FROM ranked
    WHERE usage.id = ranked.id AND ranked.position > 1`.execute(db);

  await sql`DROP INDEX paymaster_usage_user_op_idx`.execute(db);
  await sql`CREATE UNIQUE INDEX paymaster_usage_operation_key
    ON paymaster_usage (chain_id, entry_point, user_op_hash) WHERE user_op_hash IS NOT NULL`.execute(db);
  await sql`CREATE INDEX paymaster_usage_request_fingerprint_idx
    ON paymaster_usage (chain_id, entry_point, request_fingerprint) WHERE request_fingerprint IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX paymaster_usage_request_fingerprint_idx`.execute(db);
  await sql`DROP INDEX paymaster_usage_operation_key`.execute(db);
  await sql`CREATE INDEX paymaster_usage_user_op_idx ON paymaster_usage (chain_id, user_op_hash)
    WHERE user_op_hash IS NOT NULL`.execute(db);
  await db.schema
    .alterTable('paymaster_usage')
    .dropColumn('signed_result')
    .dropColumn('request_fingerprint')
    .execute();
}
