import { sql, type Kysely } from 'kysely';

/**
 * `deposits_unsettled_idx` (created_at, where settled_at is null) served no query: the unsettled
 * deposits are always read and marked per session (db/deposits.ts findUnsettledDeposits,
 * markDepositsSettled), through `deposits_session_idx`. Every deposit row was written into it once and
 * again when settled; the deposit monitor records up to a thousand rows per scan (issue 33), so an unused
 * index is a write per row on its hottest statement.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS deposits_unsettled_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX deposits_unsettled_idx ON deposits (created_at) WHERE settled_at IS NULL`.execute(
    db,
  );
}
