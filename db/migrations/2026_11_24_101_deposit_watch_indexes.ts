import { sql, type Kysely } from 'kysely';

/**
 * The deposit monitor asks the chain only for transfers into the deposit addresses it watches (sessions
 * whose expiry is recent enough for a payment, even a late one, to be expected): it finds them through
 * recent expiries, then their options on the chain.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX sessions_expires_at_idx ON sessions (expires_at)`.execute(db);
  await sql`CREATE INDEX payment_options_session_chain_idx ON payment_options (session_id, chain_id)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX payment_options_session_chain_idx`.execute(db);
  await sql`DROP INDEX sessions_expires_at_idx`.execute(db);
}
