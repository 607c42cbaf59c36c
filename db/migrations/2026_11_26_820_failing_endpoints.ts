import { sql, type Kysely } from 'kysely';

/**
 * Failing endpoints are disabled (docs/operations.md "A webhook endpoint disabled for failing"): an endpoint remembers since when every attempt to it
 * has failed, and why and when it was disabled. The `endpoint.disabled` event belongs to no session.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('failing_since', 'timestamptz')
    .addColumn('disabled_reason', 'text', (col) => col.check(sql`disabled_reason IN ('failing')`))
    .addColumn('disabled_at', 'timestamptz')
    .addColumn('disabled_event_id', 'text')
    .execute();
  await db.schema
    .alterTable('events')
    .alterColumn('session_id', (col) => col.dropNotNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM events WHERE session_id IS NULL`.execute(db);
  await db.schema
    .alterTable('events')
    .alterColumn('session_id', (col) => col.setNotNull())
    .execute();
  await db.schema
    .alterTable('webhook_endpoints')
    .dropColumn('failing_since')
    .dropColumn('disabled_reason')
    .dropColumn('disabled_at')
    .dropColumn('disabled_event_id')
    .execute();
}
