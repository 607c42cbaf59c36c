import { sql, type Kysely } from 'kysely';

/**
 * API-key changes announced on the `api_key_changes` channel (payload: the key's hash), so every api
 * process can drop a cached key lookup the moment a key is revoked, re-hashed, moved or deleted (a
 * merchant's deletion cascades here too). A trigger rather than a NOTIFY in the revoke route: every path
 * that changes a key, including one not written yet or a manual UPDATE, announces it, in the same
 * transaction (delivered at commit, never for a rollback). The last-use time is not watched: it changes
 * nothing a lookup returns.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('api_key_changes', OLD.key_hash);
      IF TG_OP = 'UPDATE' AND NEW.key_hash IS DISTINCT FROM OLD.key_hash THEN
        PERFORM pg_notify('api_key_changes', NEW.key_hash);
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER api_keys_notify_change
    AFTER UPDATE OF revoked_at, key_hash, merchant_id OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_change()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER api_keys_notify_change ON api_keys`.execute(db);
  await sql`DROP FUNCTION notify_api_key_change()`.execute(db);
}
