import { sql, type Kysely } from 'kysely';

/**
 * Subscriptions and their charges (issue 42, docs/service-contract.md "Routes"). A subscription holds the customer's signed
 * delegation (one subscription per delegation: its hash is unique). A charge row is written BEFORE its
 * period's delegation is redeemed, and (subscription, period index) is unique: the period index is the
 * idempotency key of the charge, so a retried activity or a replayed workflow finds the row and never
 * asks the chain twice. A period's invoice is a payment session carrying `subscription_id`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('plan_id', 'uuid', (col) => col.notNull().references('subscription_plans.id'))
    .addColumn('status', 'text', (col) =>
      col.notNull().check(sql`status IN ('trialing', 'active', 'past_due', 'canceled')`),
    )
    .addColumn('customer_account', 'text', (col) => col.notNull())
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('token_symbol', 'text', (col) => col.notNull())
    .addColumn('token_address', 'text', (col) => col.notNull())
    .addColumn('period_amount', sql`numeric(78,0)`, (col) => col.notNull().check(sql`period_amount > 0`))
    .addColumn('period_seconds', 'integer', (col) => col.notNull().check(sql`period_seconds > 0`))
    .addColumn('delegation', 'jsonb', (col) => col.notNull())
    .addColumn('delegation_hash', 'text', (col) => col.notNull().unique())
    .addColumn('current_period_start', 'timestamptz', (col) => col.notNull())
    .addColumn('current_period_end', 'timestamptz', (col) => col.notNull())
    .addColumn('cancel_at_period_end', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('canceled_at', 'timestamptz')
    .addColumn('latest_session_id', 'uuid', (col) => col.references('sessions.id'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'subscriptions_canceled_check',
      sql`(status = 'canceled') = (canceled_at IS NOT NULL)`,
    )
    .execute();
  await db.schema
    .createIndex('subscriptions_merchant_idx')
    .on('subscriptions')
    .columns(['merchant_id', 'created_at'])
    .execute();
  await db.schema.createIndex('subscriptions_plan_idx').on('subscriptions').column('plan_id').execute();

  await db.schema
    .createTable('subscription_charges')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('subscription_id', 'uuid', (col) =>
      col.notNull().references('subscriptions.id').onDelete('cascade'),
    )
    .addColumn('period_index', 'integer', (col) => col.notNull().check(sql`period_index >= 0`))
    .addColumn('session_id', 'uuid', (col) => col.notNull().references('sessions.id'))
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('pending')
        .check(sql`status IN ('pending', 'redeemed', 'failed')`),
    )
    .addColumn('tx_hash', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('failed_attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('subscription_charges_period_once', ['subscription_id', 'period_index'])
    .addCheckConstraint(
      'subscription_charges_redeemed_check',
      sql`(status = 'redeemed') = (tx_hash IS NOT NULL)`,
    )
    .execute();

  await db.schema
    .alterTable('sessions')
    .addColumn('subscription_id', 'uuid', (col) => col.references('subscriptions.id'))
    .execute();
  await sql`CREATE INDEX sessions_subscription_idx ON sessions (subscription_id) WHERE subscription_id IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX sessions_subscription_idx`.execute(db);
  await db.schema.alterTable('sessions').dropColumn('subscription_id').execute();
  await db.schema.dropTable('subscription_charges').execute();
  await db.schema.dropTable('subscriptions').execute();
}
