import type { Kysely } from 'kysely';

/**
 * Vault deploys cost the platform gas (about 1.34M each), so they are limited (issue 26, finding 6): queued
 * deploys per merchant and UTC day (`yield_deploy_counters`, taken in the transaction that queues the deploy,
 * so concurrent requests never overshoot), and a back-off after a failure, measured from `failed_at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('yield_deploy_counters')
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('day', 'date', (col) => col.notNull())
    .addColumn('used', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('yield_deploy_counters_pkey', ['merchant_id', 'day'])
    .execute();
  await db.schema.alterTable('yield_deployments').addColumn('failed_at', 'timestamptz').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('yield_deployments').dropColumn('failed_at').execute();
  await db.schema.dropTable('yield_deploy_counters').execute();
}
