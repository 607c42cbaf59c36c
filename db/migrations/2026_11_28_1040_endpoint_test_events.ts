import { sql, type Kysely } from 'kysely';

/**
 * Test events (issue 48): an `endpoint.test` event is addressed to the one endpoint it was asked for
 * (`endpoint_id`), and only a test event is. Deleting the endpoint deletes its test events with its
 * delivery history; the partial index keeps that cascade off a scan of every event.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('events')
    .addColumn('endpoint_id', 'uuid', (col) => col.references('webhook_endpoints.id').onDelete('cascade'))
    .execute();
  await db.schema
    .alterTable('events')
    .addCheckConstraint(
      'events_endpoint_test_check',
      sql`(type = 'endpoint.test') = (endpoint_id IS NOT NULL)`,
    )
    .execute();
  await sql`CREATE INDEX events_endpoint_idx ON events (endpoint_id) WHERE endpoint_id IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM events WHERE type = 'endpoint.test'`.execute(db);
  await sql`DROP INDEX events_endpoint_idx`.execute(db);
  await db.schema.alterTable('events').dropConstraint('events_endpoint_test_check').execute();
  await db.schema.alterTable('events').dropColumn('endpoint_id').execute();
}
