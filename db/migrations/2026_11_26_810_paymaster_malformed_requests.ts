import { sql, type Kysely } from 'kysely';

/**
 * Malformed paymaster requests (security review II, finding 10). Anyone holding a public client id can
 * send requests whose shape is refused before an operation could be read (parse error, unknown method,
 * invalid params, a method the bundler proxy does not relay). Each used to add a usage row: unbounded
 * rows, written by strangers. They are counted instead, one row per client, hour and reason; the
 * reason is one of our own codes, never the caller's text.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('paymaster_malformed_requests')
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('hour', 'timestamptz', (col) => col.notNull())
    .addColumn('reason', 'text', (col) => col.notNull())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('count', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('paymaster_malformed_requests_pkey', ['client_id', 'hour', 'reason'])
    .addCheckConstraint('paymaster_malformed_requests_count_check', sql`count > 0`)
    .execute();
  await sql`CREATE INDEX paymaster_malformed_requests_merchant_hour_idx
    ON paymaster_malformed_requests (merchant_id, hour)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('paymaster_malformed_requests').execute();
}
