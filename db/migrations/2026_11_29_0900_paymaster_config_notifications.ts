import { sql, type Kysely } from 'kysely';

/**
 * A merchant's paymaster configuration announced on the `paymaster_config_changes` channel (payload: the
 * merchant id), so every api process can drop its cached copy (paymaster/policy/merchantConfigCache.ts)
 * the moment a deny rule, an allowlist entry, the merchant's own limits or one of its clients' sponsorship
 * policies changes (issue 46: the signed answer's decision reads come from that cache). A trigger, as for
 * paymaster clients (migration 990): every path that changes a row announces it in the same transaction,
 * delivered at commit and never for a rollback; a merchant's deletion cascades here too.
 */
const TABLES = [
  'paymaster_deny_rules',
  'paymaster_allowlist_entries',
  'paymaster_merchant_limits',
  'paymaster_policies',
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_paymaster_config_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('paymaster_config_changes', OLD.merchant_id::text);
      END IF;
      IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('paymaster_config_changes', NEW.merchant_id::text);
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  for (const table of TABLES) {
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_notify_config_change`)}
      AFTER INSERT OR UPDATE OR DELETE ON ${sql.table(table)}
      FOR EACH ROW EXECUTE FUNCTION notify_paymaster_config_change()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await sql`DROP TRIGGER ${sql.raw(`${table}_notify_config_change`)} ON ${sql.table(table)}`.execute(db);
  }
  await sql`DROP FUNCTION notify_paymaster_config_change()`.execute(db);
}
