import { sql, type Kysely } from 'kysely';

/**
 * Money safety of settlement (issue 12):
 * - each payment option binds its own payout address (a top-up's is the platform treasury of its chain);
 * - a session records the USD it has settled, so an underpaid one can be swept without being completed;
 * - a flush keeps its signed transaction and nonce from before it is broadcast, so a retry re-sends the
 *   same transaction instead of another one, and the USDe a bridge delivered is stored with it;
 * - a top-up records the USD credited (what the treasury received), which may differ from the amount asked;
 * - a monitor checkpoint keeps the scanned block's timestamp, against which expiry is judged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payment_options').addColumn('payout_address', 'text').execute();
  await sql`UPDATE payment_options o SET payout_address = s.payout_address FROM sessions s WHERE s.id = o.session_id`.execute(
    db,
  );
  await sql`ALTER TABLE payment_options ALTER COLUMN payout_address SET NOT NULL`.execute(db);

  await db.schema
    .alterTable('sessions')
    .addColumn('settled_amount', sql`numeric(20, 6)`, (col) => col.notNull().defaultTo(0))
    .execute();

  await db.schema
    .alterTable('settlements')
    .addColumn('flush_raw_tx', 'text')
    .addColumn('flush_nonce', 'bigint')
    .addColumn('delivered_usde', sql`numeric(78, 0)`)
    .execute();

  await db.schema
    .alterTable('topups')
    .addColumn('credited_amount_usd', sql`numeric(20, 6)`, (col) => col.notNull().defaultTo(0))
    .execute();

  await db.schema
    .alterTable('chain_monitor_checkpoints')
    .addColumn('last_scanned_block_time', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chain_monitor_checkpoints').dropColumn('last_scanned_block_time').execute();
  await db.schema.alterTable('topups').dropColumn('credited_amount_usd').execute();
  await db.schema
    .alterTable('settlements')
    .dropColumn('flush_raw_tx')
    .dropColumn('flush_nonce')
    .dropColumn('delivered_usde')
    .execute();
  await db.schema.alterTable('sessions').dropColumn('settled_amount').execute();
  await db.schema.alterTable('payment_options').dropColumn('payout_address').execute();
}
