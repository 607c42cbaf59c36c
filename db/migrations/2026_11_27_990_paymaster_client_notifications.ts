import { sql, type Kysely } from 'kysely';

/**
 * Paymaster client changes announced on the `paymaster_client_changes` channel (payload: the publishable
 * client id), so every api process can drop a cached client the moment it is revoked, its origins, chains,
 * gas mode or cap change, or it is deleted (a merchant's deletion cascades here too). A trigger, as for
 * API keys (migration 610): every path that changes a client announces it, in the same transaction
 * (delivered at commit, never for a rollback).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_paymaster_client_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('paymaster_client_changes', OLD.client_id);
      IF TG_OP = 'UPDATE' AND NEW.client_id IS DISTINCT FROM OLD.client_id THEN
        PERFORM pg_notify('paymaster_client_changes', NEW.client_id);
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER paymaster_clients_notify_change
    AFTER UPDATE OR DELETE ON paymaster_clients
    FOR EACH ROW EXECUTE FUNCTION notify_paymaster_client_change()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER paymaster_clients_notify_change ON paymaster_clients`.execute(db);
  await sql`DROP FUNCTION notify_paymaster_client_change()`.execute(db);
}
