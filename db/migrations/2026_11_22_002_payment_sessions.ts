import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('amount', sql`numeric(16, 6)`, (col) => col.notNull().check(sql`amount > 0`))
    .addColumn('merchant_name', 'text')
    .addColumn('line_items', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('payment_option_symbols', sql`text[]`, (col) => col.notNull())
    .addColumn('sandbox_mode', 'boolean', (col) => col.notNull())
    .addColumn('success_url', 'text')
    .addColumn('payout_address', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('awaiting_payment')
        .check(
          sql`status IN ('pending','awaiting_payment','confirming','bridging','completed','failed','expired')`,
        ),
    )
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('paid_at', 'timestamptz')
    .addColumn('tx_hash', 'text')
    .addColumn('paid_chain_id', 'integer')
    .addColumn('failure_reason', 'text')
    .addColumn('webhook_delivered', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('workflow_started_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('sessions_merchant_created_idx')
    .on('sessions')
    .columns(['merchant_id', 'created_at desc'])
    .execute();
  // The reconciler looks only at sessions whose workflow has not been started yet.
  await sql`CREATE INDEX sessions_workflow_pending_idx ON sessions (created_at) WHERE workflow_started_at IS NULL`.execute(
    db,
  );

  await db.schema
    .createTable('payment_options')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('session_id', 'uuid', (col) => col.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('network', 'text', (col) => col.notNull())
    .addColumn('symbol', 'text', (col) => col.notNull())
    .addColumn('token_address', 'text', (col) => col.notNull())
    .addColumn('decimals', 'integer', (col) => col.notNull())
    .addColumn('amount', sql`numeric(78, 0)`, (col) => col.notNull())
    .addColumn('deposit_address', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('payment_options_session_chain_symbol_key', ['session_id', 'chain_id', 'symbol'])
    .execute();
  // Deposit monitors match Transfer recipients against this index (lower-case, per chain).
  await sql`CREATE INDEX payment_options_deposit_idx ON payment_options (chain_id, lower(deposit_address))`.execute(
    db,
  );

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('scope', 'text', (col) => col.notNull())
    .addColumn('request_hash', 'text', (col) => col.notNull())
    .addColumn('response_status', 'integer', (col) => col.notNull())
    .addColumn('response_body', 'jsonb', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['merchant_id', 'scope', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.dropTable('payment_options').execute();
  await db.schema.dropTable('sessions').execute();
}
