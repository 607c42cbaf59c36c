import { sql, type Kysely } from 'kysely';

/**
 * Session lifecycle events (issue 29): a session emits each event type at most once, except
 * `session.failed`, once per failure — the unique (session, type) constraint becomes a partial unique
 * index that leaves `session.failed` out. A settlement also remembers where the merchant received its
 * sUSDe (`delivery_chain_id`, `delivery_tx_hash`: the flush itself on a settlement chain, the bridge's
 * staking transaction after a layer-2 flush), which `session.completed` reports.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events DROP CONSTRAINT events_session_type_key`.execute(db);
  await sql`
    CREATE UNIQUE INDEX events_session_type_once ON events (session_id, type)
    WHERE type <> 'session.failed'`.execute(db);
  await db.schema
    .alterTable('settlements')
    .addColumn('delivery_chain_id', 'integer')
    .addColumn('delivery_tx_hash', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('settlements')
    .dropColumn('delivery_chain_id')
    .dropColumn('delivery_tx_hash')
    .execute();
  await sql`DELETE FROM events a USING events b
    WHERE a.type = 'session.failed' AND b.type = a.type AND b.session_id = a.session_id AND b.id > a.id`.execute(
    db,
  );
  await sql`DROP INDEX events_session_type_once`.execute(db);
  await sql`ALTER TABLE events ADD CONSTRAINT events_session_type_key UNIQUE (session_id, type)`.execute(db);
}
