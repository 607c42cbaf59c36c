import { sql, type Kysely } from 'kysely';

/**
 * A session's timeline lists the deliveries of its events (GET /v1/merchants/me/sessions/{id}/events):
 * deliveries are found by their event, which no index served (only by endpoint and time).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id, created_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX webhook_deliveries_event_idx`.execute(db);
}
