import { sql, type Kysely } from 'kysely';

/**
 * Refund events (issue 41): `refund.succeeded` and `refund.failed` name their refund (`refund_id`), at most
 * one of each type per refund; only those types carry one. A session may hold several refunds, so the
 * once-per-session index leaves these types out, as it leaves out `session.failed` and `session.paid_late`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('events')
    .addColumn('refund_id', 'uuid', (col) => col.references('refunds.id').onDelete('cascade'))
    .execute();
  await db.schema
    .alterTable('events')
    .addCheckConstraint(
      'events_refund_check',
      sql`(type IN ('refund.succeeded', 'refund.failed')) = (refund_id IS NOT NULL)`,
    )
    .execute();
  await sql`CREATE UNIQUE INDEX events_refund_type_once ON events (refund_id, type) WHERE refund_id IS NOT NULL`.execute(
    db,
  );
  await sql`DROP INDEX events_session_type_once`.execute(db);
  await sql`
    CREATE UNIQUE INDEX events_session_type_once ON events (session_id, type)
    WHERE type NOT IN ('session.failed', 'session.paid_late', 'refund.succeeded', 'refund.failed')`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM events WHERE refund_id IS NOT NULL`.execute(db);
  await sql`DROP INDEX events_session_type_once`.execute(db);
  await sql`
    CREATE UNIQUE INDEX events_session_type_once ON events (session_id, type)
    WHERE type NOT IN ('session.failed', 'session.paid_late')`.execute(db);
  await sql`DROP INDEX events_refund_type_once`.execute(db);
  await db.schema.alterTable('events').dropConstraint('events_refund_check').execute();
  await db.schema.alterTable('events').dropColumn('refund_id').execute();
}
