import type { Kysely } from 'kysely';

/**
 * Manual webhook re-dispatches (retry-webhook) per session and UTC hour, so one session's retries are
 * capped across every api replica and restart. Rows go with their session.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_redispatch_counters')
    .addColumn('session_id', 'uuid', (col) => col.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('window_start', 'timestamptz', (col) => col.notNull())
    .addColumn('used', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('webhook_redispatch_counters_pkey', ['session_id', 'window_start'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_redispatch_counters').execute();
}
