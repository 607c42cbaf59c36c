import { sql, type Kysely } from 'kysely';

/**
 * The deposit monitor watches every deposit address on its chain whose session has not expired long ago.
 * Found through sessions, that set cost one index probe into payment_options per live session (17 → 35 ms
 * per pass from 1k to 1M rows, issue 33). The session's expiry copied onto its options (it never changes
 * after creation) lets one index range on (chain_id, session_expires_at) answer it, addresses included.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE payment_options ADD COLUMN session_expires_at timestamptz`.execute(db);
  await sql`
    UPDATE payment_options o SET session_expires_at = s.expires_at FROM sessions s WHERE s.id = o.session_id
  `.execute(db);
  await sql`ALTER TABLE payment_options ALTER COLUMN session_expires_at SET NOT NULL`.execute(db);
  await sql`
    CREATE INDEX payment_options_watched_idx
      ON payment_options (chain_id, session_expires_at) INCLUDE (deposit_address)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX payment_options_watched_idx`.execute(db);
  await sql`ALTER TABLE payment_options DROP COLUMN session_expires_at`.execute(db);
}
