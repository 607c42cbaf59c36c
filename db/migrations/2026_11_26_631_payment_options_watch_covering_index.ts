import { sql, type Kysely } from 'kysely';

/**
 * The deposit monitor's watched-address query (db/deposits.ts findWatchedDepositAddresses) joins the
 * sessions of recent expiry to their options on one chain. With only (session_id, chain_id) indexed,
 * Postgres preferred a sequential scan of payment_options hashed against the recent sessions once the
 * watched set was a few percent of the table: at 1M options the scale bench measured 470 ms per scan,
 * growing with the table. Carrying deposit_address in the index makes each probe an index-only scan, so
 * the plan is a nested loop over the watched sessions whatever the table's size. The new index has the
 * old one's keys, which it replaces.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX payment_options_session_chain_address_idx
    ON payment_options (session_id, chain_id) INCLUDE (deposit_address)`.execute(db);
  await sql`DROP INDEX payment_options_session_chain_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX payment_options_session_chain_idx ON payment_options (session_id, chain_id)`.execute(
    db,
  );
  await sql`DROP INDEX payment_options_session_chain_address_idx`.execute(db);
}
