import { sql, type Kysely } from 'kysely';

/**
 * Sponsorship limits: the merchant's own (tighter) limits, the windowed counters that limits are
 * consumed from with single-statement conditional upserts, and the USD snapshot of each usage row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('paymaster_merchant_limits')
    .addColumn('merchant_id', 'uuid', (col) =>
      col.primaryKey().references('merchants.id').onDelete('cascade'),
    )
    .addColumn('per_sender_hourly_ops', 'integer')
    .addColumn('per_sender_daily_usd', sql`numeric(20, 6)`)
    .addColumn('per_tx_usd', sql`numeric(20, 6)`)
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('paymaster_merchant_limits_ops_check', sql`per_sender_hourly_ops > 0`)
    .addCheckConstraint('paymaster_merchant_limits_daily_check', sql`per_sender_daily_usd > 0`)
    .addCheckConstraint('paymaster_merchant_limits_tx_check', sql`per_tx_usd > 0`)
    .execute();

  // One row per limit and window: `used` is operations or micro-dollars (USD × 10^6), by limit kind.
  await db.schema
    .createTable('paymaster_limit_counters')
    .addColumn('counter_key', 'text', (col) => col.notNull())
    .addColumn('window_start', 'timestamptz', (col) => col.notNull())
    .addColumn('used', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('paymaster_limit_counters_pkey', ['counter_key', 'window_start'])
    .addCheckConstraint('paymaster_limit_counters_used_check', sql`used >= 0`)
    .execute();

  await db.schema
    .alterTable('paymaster_usage')
    // USD per ETH with 8 decimals, as the aggregator answered (null when the op was not priced).
    .addColumn('eth_usd_price', sql`numeric(20, 8)`)
    .addColumn('estimated_gas_cost_wei', sql`numeric(78, 0)`)
    // Estimated cost plus markup, decimal USD.
    .addColumn('estimated_cost_usd', sql`numeric(20, 6)`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('paymaster_usage')
    .dropColumn('eth_usd_price')
    .dropColumn('estimated_gas_cost_wei')
    .dropColumn('estimated_cost_usd')
    .execute();
  await db.schema.dropTable('paymaster_limit_counters').execute();
  await db.schema.dropTable('paymaster_merchant_limits').execute();
}
