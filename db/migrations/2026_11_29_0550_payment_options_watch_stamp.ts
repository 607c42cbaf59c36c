import { sql, type Kysely } from 'kysely';

/**
 * The deposit monitor keeps a filter of the watched deposit addresses in the worker and reads, before each
 * range's match, only the options that entered the watch since its last read (docs/decisions.md, "Deposit
 * address filter"). `watch_changed_at` says when: the writing transaction's start (`now()`, the clock
 * pg_stat_activity's `xact_start` uses), set by a trigger on insert and on any change that may bring a row
 * into the watch (its chain or address, its expiry moved later by hand and carried here by the sessions
 * trigger), never by the writer, so no insert can stamp a row in the past. The index answers "changed
 * since" per chain with what the filter needs, the address and the expiry, without the heap.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // A stable default: no table rewrite; rows already there read the migration's time (the filter's first
  // build, after it, reads them all anyway).
  await sql`ALTER TABLE payment_options ADD COLUMN watch_changed_at timestamptz NOT NULL DEFAULT now()`.execute(
    db,
  );
  await sql`
    CREATE FUNCTION payment_options_stamp_watch_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- Stamped when the row may have entered the watch: inserted, its address or chain changed, or its
      -- expiry moved later. An expiry moved earlier cannot bring a row in (it was watched before if it is
      -- now), and leaves the stamp alone: a bulk expiry by hand does not make every filter read it again.
      IF TG_OP = 'INSERT'
         OR NEW.session_expires_at > OLD.session_expires_at
         OR NEW.deposit_address IS DISTINCT FROM OLD.deposit_address
         OR NEW.chain_id IS DISTINCT FROM OLD.chain_id THEN
        NEW.watch_changed_at := now();
      ELSE
        NEW.watch_changed_at := OLD.watch_changed_at;
      END IF;
      RETURN NEW;
    END $$
  `.execute(db);
  await sql`
    CREATE TRIGGER payment_options_watch_change
      BEFORE INSERT OR UPDATE OF chain_id, deposit_address, session_expires_at, watch_changed_at
      ON payment_options
      FOR EACH ROW EXECUTE FUNCTION payment_options_stamp_watch_change()
  `.execute(db);
  await sql`
    CREATE INDEX payment_options_watch_changed_idx
      ON payment_options (chain_id, watch_changed_at) INCLUDE (deposit_address, session_expires_at)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX payment_options_watch_changed_idx`.execute(db);
  await sql`DROP TRIGGER payment_options_watch_change ON payment_options`.execute(db);
  await sql`DROP FUNCTION payment_options_stamp_watch_change()`.execute(db);
  await sql`ALTER TABLE payment_options DROP COLUMN watch_changed_at`.execute(db);
}
