import { sql, type Kysely } from 'kysely';

/**
 * Payment outcomes (issue 41): `session.paid_late` is sent once per deposit that arrived after expiry, so
 * a session may hold several; each names its deposit (`deposit_id`), unique among events, and only that
 * type does. The once-per-session index leaves it out, as it leaves out `session.failed`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('events')
    .addColumn('deposit_id', 'uuid', (col) => col.references('deposits.id').onDelete('cascade'))
    .execute();
  await db.schema
    .alterTable('events')
    .addCheckConstraint(
      'events_late_deposit_check',
      sql`(type = 'session.paid_late') = (deposit_id IS NOT NULL)`,
    )
    .execute();
  await sql`CREATE UNIQUE INDEX events_deposit_once ON events (deposit_id) WHERE deposit_id IS NOT NULL`.execute(
    db,
  );
  await sql`DROP INDEX events_session_type_once`.execute(db);
  await sql`
    CREATE UNIQUE INDEX events_session_type_once ON events (session_id, type)
    WHERE type NOT IN ('session.failed', 'session.paid_late')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM events WHERE type = 'session.paid_late'`.execute(db);
  await sql`DROP INDEX events_session_type_once`.execute(db);
  await sql`
    CREATE UNIQUE INDEX events_session_type_once ON events (session_id, type)
    WHERE type <> 'session.failed'`.execute(db);
  await sql`DROP INDEX events_deposit_once`.execute(db);
  await db.schema.alterTable('events').dropConstraint('events_late_deposit_check').execute();
  await db.schema.alterTable('events').dropColumn('deposit_id').execute();
}
