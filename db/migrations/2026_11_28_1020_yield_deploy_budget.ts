import { sql, type Kysely } from 'kysely';

/**
 * A platform-wide budget for vault deploys (security review III, finding 2): the per-merchant cap bounds
 * nothing when a merchant is a new wallet key, so deploys are also counted per chain and UTC day, in number
 * and in wei of gas (`yield_deploy_budget_counters`, taken in the transaction that queues the deploy).
 *
 * Each queued deploy has a charge (`yield_deploy_charges`): the gas bound its transaction is signed within
 * (gas limit, max fee per gas) and the wei that bound reserves in the day's budget; on a mainnet also the
 * ETH/USD price and markup it is priced at and the hold (`paymaster_operation_holds`, the prepaid balance
 * reservation the paymaster's own holds count against) of its maximum charge. When the deploy ends, the
 * charge is settled at the actual cost (the ledger debit `yield-deploy:<charge id>`) or released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('yield_deploy_budget_counters')
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('day', 'date', (col) => col.notNull())
    .addColumn('deploys', 'integer', (col) => col.notNull().check(sql`deploys >= 0`))
    // Wei of the day's deploys: reserved while a deploy is held, its actual cost once settled.
    .addColumn('wei', sql`numeric(78, 0)`, (col) => col.notNull().check(sql`wei >= 0`))
    .addPrimaryKeyConstraint('yield_deploy_budget_counters_pkey', ['chain_id', 'day'])
    .execute();

  await db.schema
    .createTable('yield_deploy_charges')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('deployment_id', 'uuid', (col) =>
      col.notNull().references('yield_deployments.id').onDelete('cascade'),
    )
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('day', 'date', (col) => col.notNull())
    .addColumn('gas_limit', 'bigint', (col) => col.notNull().check(sql`gas_limit > 0`))
    .addColumn('max_fee_per_gas', sql`numeric(78, 0)`, (col) => col.notNull().check(sql`max_fee_per_gas > 0`))
    .addColumn('reserved_wei', sql`numeric(78, 0)`, (col) => col.notNull())
    // Mainnets only: what the merchant's prepaid balance is held and charged at.
    .addColumn('eth_usd_price', sql`numeric(20, 8)`)
    .addColumn('markup_bps', 'integer')
    .addColumn('reserved_usd', sql`numeric(20, 6)`)
    .addColumn('hold_id', 'uuid')
    .addColumn('status', 'text', (col) => col.notNull().check(sql`status IN ('held', 'settled', 'released')`))
    .addColumn('tx_hash', 'text')
    .addColumn('cost_wei', sql`numeric(78, 0)`)
    .addColumn('charged_usd', sql`numeric(20, 6)`)
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('settled_at', 'timestamptz')
    .addCheckConstraint(
      'yield_deploy_charges_priced_check',
      sql`(eth_usd_price IS NULL) = (markup_bps IS NULL) AND (eth_usd_price IS NULL) = (reserved_usd IS NULL)
        AND (eth_usd_price IS NULL) = (hold_id IS NULL)`,
    )
    .addCheckConstraint('yield_deploy_charges_cost_check', sql`cost_wei IS NULL OR cost_wei <= reserved_wei`)
    .execute();
  // One open charge per deployment: the deploy in flight.
  await sql`CREATE UNIQUE INDEX yield_deploy_charges_held_idx
    ON yield_deploy_charges (deployment_id) WHERE status = 'held'`.execute(db);
  await db.schema
    .createIndex('yield_deploy_charges_merchant_idx')
    .on('yield_deploy_charges')
    .columns(['merchant_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('yield_deploy_charges').execute();
  await db.schema.dropTable('yield_deploy_budget_counters').execute();
}
