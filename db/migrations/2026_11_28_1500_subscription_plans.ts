import { sql, type Kysely } from 'kysely';

/**
 * Subscription plans (issue 42, docs/service-contract.md "Routes"): what a merchant sells by the period. The amount is USD
 * per period, exact (numeric, like a session's); an archived plan keeps its subscriptions charging but
 * takes no new subscriber.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('subscription_plans')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('amount', sql`numeric(16,6)`, (col) => col.notNull().check(sql`amount > 0`))
    .addColumn('interval', 'text', (col) => col.notNull().check(sql`interval IN ('day', 'week', 'month')`))
    .addColumn('interval_count', 'integer', (col) =>
      col.notNull().check(sql`interval_count BETWEEN 1 AND 12`),
    )
    .addColumn('trial_days', 'integer', (col) => col.notNull().check(sql`trial_days BETWEEN 0 AND 90`))
    .addColumn('archived_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('subscription_plans_merchant_idx')
    .on('subscription_plans')
    .columns(['merchant_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('subscription_plans').execute();
}
