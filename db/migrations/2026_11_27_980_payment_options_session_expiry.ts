import { sql, type Kysely } from 'kysely';

/**
 * The deposit monitor watches every deposit address on its chain whose session has not expired long ago.
 * Found through sessions, that set cost one index probe into payment_options per live session (17 → 35 ms
 * per pass from 1k to 1M rows, issue 33). The session's expiry copied onto its options lets one index range
 * on (chain_id, session_expires_at) answer it, addresses included. The API never changes an expiry after
 * creation; a trigger carries any change made by hand (an operator, a test) to the options all the same.
 * Migration 631's covering index served only the old join: dropped, as the unique key's
 * (session_id, chain_id, symbol) prefix serves every other lookup by session.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE payment_options ADD COLUMN session_expires_at timestamptz`.execute(db);
  await sql`
    UPDATE payment_options o SET session_expires_at = s.expires_at FROM sessions s WHERE s.id = o.session_id
  `.execute(db);
  await sql`ALTER TABLE payment_options ALTER COLUMN session_expires_at SET NOT NULL`.execute(db);
  await sql`
    CREATE FUNCTION payment_options_follow_session_expiry() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE payment_options SET session_expires_at = NEW.expires_at WHERE session_id = NEW.id;
      RETURN NULL;
    END $$
  `.execute(db);
  await sql`
    CREATE TRIGGER sessions_expiry_to_payment_options
      AFTER UPDATE OF expires_at ON sessions
      FOR EACH ROW WHEN (OLD.expires_at IS DISTINCT FROM NEW.expires_at)
      EXECUTE FUNCTION payment_options_follow_session_expiry()
  `.execute(db);
  await sql`
    CREATE INDEX payment_options_watched_idx
      ON payment_options (chain_id, session_expires_at) INCLUDE (deposit_address)
  `.execute(db);
  await sql`DROP INDEX payment_options_session_chain_address_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX payment_options_session_chain_address_idx
      ON payment_options (session_id, chain_id) INCLUDE (deposit_address)
  `.execute(db);
  await sql`DROP INDEX payment_options_watched_idx`.execute(db);
  await sql`DROP TRIGGER sessions_expiry_to_payment_options ON sessions`.execute(db);
  await sql`DROP FUNCTION payment_options_follow_session_expiry()`.execute(db);
  await sql`ALTER TABLE payment_options DROP COLUMN session_expires_at`.execute(db);
}
