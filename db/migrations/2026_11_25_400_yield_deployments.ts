import { sql, type Kysely } from 'kysely';

/**
 * Yield deployments (docs/yield.md): a merchant's branded yield product on one chain, the contract sets
 * (vaults) deployment workflows made, and the custom domains its site is served on.
 *
 * The deploy transaction is recorded on the deployment (raw, hash, nonce) before it is broadcast, so a
 * retried workflow step brings that same transaction to a receipt instead of sending another; a contract
 * set is unique per deployment that made it, so a retry that stores it again stores nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('yield_contract_sets')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('deployed_by_deployment_id', 'uuid', (col) => col.notNull().unique())
    .addColumn('factory', 'text', (col) => col.notNull())
    .addColumn('tx_hash', 'text', (col) => col.notNull())
    .addColumn('vaults', 'jsonb', (col) => col.notNull())
    .addColumn('deployed_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('yield_contract_sets_merchant_chain_idx')
    .on('yield_contract_sets')
    .columns(['merchant_id', 'chain_id', 'deployed_at'])
    .execute();

  await db.schema
    .createTable('yield_deployments')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('status', 'text', (col) =>
      col.notNull().check(sql`status IN ('draft', 'deploying', 'active', 'failed', 'sunset')`),
    )
    .addColumn('tokens', 'jsonb', (col) => col.notNull())
    .addColumn('branding', 'jsonb', (col) => col.notNull())
    .addColumn('contract_set_id', 'uuid', (col) => col.references('yield_contract_sets.id'))
    .addColumn('failure_reason', 'text')
    .addColumn('deploy_raw_tx', 'text')
    .addColumn('deploy_tx_hash', 'text')
    .addColumn('deploy_nonce', 'bigint')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('sunset_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('yield_deployments_merchant_created_idx')
    .on('yield_deployments')
    .columns(['merchant_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('yield_domains')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('deployment_id', 'uuid', (col) =>
      col.notNull().references('yield_deployments.id').onDelete('cascade'),
    )
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    // Lower-case; one merchant per hostname.
    .addColumn('hostname', 'text', (col) => col.notNull().unique())
    .addColumn('verification_value', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) =>
      col.notNull().check(sql`status IN ('pending', 'verified', 'failed')`),
    )
    .addColumn('verified_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('yield_domains_deployment_idx')
    .on('yield_domains')
    .column('deployment_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('yield_domains').execute();
  await db.schema.dropTable('yield_deployments').execute();
  await db.schema.dropTable('yield_contract_sets').execute();
}
