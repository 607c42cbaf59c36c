import { sql, type Kysely } from 'kysely';

/**
 * Webhook delivery operations (docs/decisions.md "Webhook delivery operations"):
 * - a rotated secret keeps signing beside the new one until `previous_secret_expires_at`, so a
 *   receiver can swap its secret without dropping a delivery;
 * - resends and recoveries per endpoint and UTC hour, capped across every api replica;
 * - a delivery knows the delivery it re-sends, so the list shows where it came from.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('previous_secret_ciphertext', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .execute();
  await db.schema
    .alterTable('webhook_deliveries')
    .addColumn('resend_of', 'uuid', (col) => col.references('webhook_deliveries.id').onDelete('set null'))
    .execute();
  await db.schema
    .createTable('webhook_endpoint_operation_counters')
    .addColumn('endpoint_id', 'uuid', (col) =>
      col.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    .addColumn('window_start', 'timestamptz', (col) => col.notNull())
    .addColumn('used', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('webhook_endpoint_operation_counters_pkey', ['endpoint_id', 'window_start'])
    .execute();
  // Recovery looks up an endpoint's deliveries by time.
  await sql`CREATE INDEX webhook_deliveries_endpoint_created_idx ON webhook_deliveries (endpoint_id, created_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX webhook_deliveries_endpoint_created_idx`.execute(db);
  await db.schema.dropTable('webhook_endpoint_operation_counters').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('resend_of').execute();
  await db.schema
    .alterTable('webhook_endpoints')
    .dropColumn('previous_secret_ciphertext')
    .dropColumn('previous_secret_expires_at')
    .execute();
}
