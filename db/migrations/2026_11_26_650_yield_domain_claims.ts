import { sql, type Kysely } from 'kysely';

/**
 * Custom domains cannot be squatted (security review II, finding 1): a hostname is held only by a
 * `verified` row (a pending or failed one blocks nobody; the first TXT proof wins and the other pending
 * rows of that hostname fail), and pending rows per merchant are counted by an index of their own.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE yield_domains DROP CONSTRAINT yield_domains_hostname_key`.execute(db);
  await sql`
    CREATE UNIQUE INDEX yield_domains_verified_hostname_key ON yield_domains (hostname)
    WHERE status = 'verified'
  `.execute(db);
  await db.schema.createIndex('yield_domains_hostname_idx').on('yield_domains').column('hostname').execute();
  await sql`
    CREATE INDEX yield_domains_merchant_pending_idx ON yield_domains (merchant_id) WHERE status = 'pending'
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX yield_domains_merchant_pending_idx`.execute(db);
  await sql`DROP INDEX yield_domains_hostname_idx`.execute(db);
  await sql`DROP INDEX yield_domains_verified_hostname_key`.execute(db);
  // Only one row per hostname may stay: the verified one, else the newest.
  await sql`
    DELETE FROM yield_domains a USING yield_domains b
    WHERE a.hostname = b.hostname AND a.id <> b.id
      AND (b.status = 'verified' OR (a.status <> 'verified' AND a.created_at < b.created_at))
  `.execute(db);
  await sql`ALTER TABLE yield_domains ADD CONSTRAINT yield_domains_hostname_key UNIQUE (hostname)`.execute(
    db,
  );
}
