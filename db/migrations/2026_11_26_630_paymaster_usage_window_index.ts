import { sql, type Kysely } from 'kysely';

/**
 * The paymaster overview (GET /v1/merchants/me/paymaster/overview, default window 24h) tallies the
 * merchant's usage rows created since the window start. Without an index on (merchant_id, created_at)
 * Postgres read every row of the table (a sequential scan, or the merchant's whole history through
 * paymaster_usage_merchant_seq_idx) for a window that holds a few of them: the scale bench measured it
 * growing with the table. With it, a window costs the rows in the window.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX paymaster_usage_merchant_created_idx ON paymaster_usage (merchant_id, created_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX paymaster_usage_merchant_created_idx`.execute(db);
}
