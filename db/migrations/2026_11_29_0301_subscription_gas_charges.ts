import { sql, type Kysely } from 'kysely';

/**
 * `subscription_gas_charges`: what a period charge's redemption cost the platform's subscription executor in
 * gas, billed to the merchant's prepaid balance like a sponsored operation's gas (issue 42). One row per
 * period charge (unique `subscription_charge_id`), so a retried activity or a rescan bills once; mainnets
 * only (testnet gas is not the merchant's money). Priced and unpriced like `gas_charges`: both figures or
 * neither.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('subscription_gas_charges')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('subscription_charge_id', 'uuid', (col) =>
      col.notNull().unique().references('subscription_charges.id').onDelete('cascade'),
    )
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('tx_hash', 'text', (col) => col.notNull())
    .addColumn('gas_cost_wei', sql`numeric(78, 0)`, (col) => col.notNull())
    .addColumn('eth_usd_price', sql`numeric(20, 8)`)
    .addColumn('markup_bps', 'integer', (col) => col.notNull())
    .addColumn('amount_usd', sql`numeric(20, 6)`)
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'subscription_gas_charges_priced_check',
      sql`(eth_usd_price IS NULL) = (amount_usd IS NULL)`,
    )
    .execute();
  await db.schema
    .createIndex('subscription_gas_charges_merchant_idx')
    .on('subscription_gas_charges')
    .columns(['merchant_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('subscription_gas_charges').execute();
}
