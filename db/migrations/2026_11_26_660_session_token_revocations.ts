import { sql, type Kysely } from 'kysely';

/**
 * Logout (docs/decisions.md "Security review II — accounts and domains", security review II finding 12f): a merchant session token (JWT) signed out before
 * its expiry is listed here by its id (the `jti`) until it expires. An insert is announced on the
 * `session_token_revocations` channel (payload: the id and its expiry in epoch ms), so every api process adds it to the list it
 * checks beside the API-key cache (migration 610's design) within the round trip of a notification.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('session_token_revocations')
    .addColumn('token_id', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('revoked_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('session_token_revocations_expires_at_idx')
    .on('session_token_revocations')
    .column('expires_at')
    .execute();
  await sql`
    CREATE FUNCTION notify_session_token_revocation() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('session_token_revocations',
        NEW.token_id || ' ' || floor(extract(epoch FROM NEW.expires_at) * 1000)::bigint);
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER session_token_revocations_notify
    AFTER INSERT ON session_token_revocations
    FOR EACH ROW EXECUTE FUNCTION notify_session_token_revocation()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('session_token_revocations').execute();
  await sql`DROP FUNCTION notify_session_token_revocation()`.execute(db);
}
