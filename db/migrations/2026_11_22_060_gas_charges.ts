import { sql, type Kysely } from 'kysely';

/**
 * Gas charges: one per included sponsored operation (success or revert), with the figures it was priced
 * from. The unique usage id makes the receipt tracker's rescans unable to charge twice; the prepaid
 * ledger debit of a priced charge references the same usage id (also unique per merchant).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('gas_charges')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // Insertion order: the charges list pages by it.
    .addColumn('seq', 'bigint', (col) => col.notNull().generatedAlwaysAsIdentity())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('usage_id', 'uuid', (col) =>
      col.notNull().unique().references('paymaster_usage.id').onDelete('cascade'),
    )
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('user_op_hash', 'text', (col) => col.notNull())
    .addColumn('tx_hash', 'text', (col) => col.notNull())
    .addColumn('operation_status', 'text', (col) => col.notNull())
    .addColumn('actual_gas_cost_wei', sql`numeric(78, 0)`, (col) => col.notNull())
    .addColumn('eth_usd_price', sql`numeric(20, 8)`)
    .addColumn('markup_bps', 'integer', (col) => col.notNull())
    .addColumn('amount_usd', sql`numeric(20, 6)`)
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'gas_charges_operation_status_check',
      sql`operation_status IN ('onchain_success', 'onchain_reverted')`,
    )
    // Priced and unpriced charges: both figures or neither.
    .addCheckConstraint('gas_charges_priced_check', sql`(eth_usd_price IS NULL) = (amount_usd IS NULL)`)
    .execute();
  await db.schema
    .createIndex('gas_charges_merchant_seq_idx')
    .on('gas_charges')
    .columns(['merchant_id', 'seq desc'])
    .execute();
  await db.schema
    .createIndex('gas_charges_merchant_created_idx')
    .on('gas_charges')
    .columns(['merchant_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('gas_charges').execute();
}
