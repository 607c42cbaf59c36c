import { sql, type Kysely } from 'kysely';

/**
 * Refunds of a payment session (issue 41; docs/service-contract.md "Refunds"). Merchant-scoped,
 * one session each. `amount` is decimal USD (at most 6 decimals, so it is exact in every supported
 * token); `amount_units` is the same amount in the refund token's base units once the chain is known.
 * The claim token is stored as its SHA-256 only. A transaction pays at most one refund on its chain, and
 * an Idempotency-Key names at most one refund of a merchant.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('refunds')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('session_id', 'uuid', (col) => col.notNull().references('sessions.id'))
    .addColumn('amount', sql`numeric(20,6)`, (col) => col.notNull().check(sql`amount > 0`))
    .addColumn('reason', 'text')
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .check(
          sql`status IN ('awaiting_address', 'awaiting_authorization', 'awaiting_payment', 'processing', 'succeeded', 'failed', 'canceled')`,
        ),
    )
    .addColumn('source', 'text', (col) => col.notNull().check(sql`source IN ('forwarder', 'merchant')`))
    .addColumn('chain_id', 'integer')
    .addColumn('token_symbol', 'text', (col) => col.notNull())
    .addColumn('token_address', 'text')
    .addColumn('token_decimals', 'integer')
    .addColumn('amount_units', sql`numeric(78,0)`, (col) => col.check(sql`amount_units > 0`))
    .addColumn('address', 'text')
    .addColumn('tx_hash', 'text')
    .addColumn('claim_token_hash', 'text', (col) => col.unique())
    .addColumn('claim_expires_at', 'timestamptz')
    .addColumn('idempotency_key', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('succeeded_at', 'timestamptz')
    .addColumn('canceled_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('refunds_idempotency_key_once', ['merchant_id', 'idempotency_key'])
    // Past awaiting_address the refund knows where it goes, on which chain, in which token, how much.
    .addCheckConstraint(
      'refunds_destination_check',
      sql`status IN ('awaiting_address', 'canceled') OR (address IS NOT NULL AND chain_id IS NOT NULL AND token_address IS NOT NULL AND amount_units IS NOT NULL)`,
    )
    .addCheckConstraint('refunds_succeeded_check', sql`(status = 'succeeded') = (succeeded_at IS NOT NULL)`)
    .addCheckConstraint('refunds_succeeded_tx_check', sql`status <> 'succeeded' OR tx_hash IS NOT NULL`)
    .addCheckConstraint('refunds_canceled_check', sql`(status = 'canceled') = (canceled_at IS NOT NULL)`)
    .execute();
  await db.schema
    .createIndex('refunds_session_idx')
    .on('refunds')
    .columns(['session_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('refunds_merchant_idx')
    .on('refunds')
    .columns(['merchant_id', 'created_at'])
    .execute();
  // One transaction pays one refund: a merchant cannot report the same transfer for two refunds.
  await sql`CREATE UNIQUE INDEX refunds_tx_once ON refunds (chain_id, lower(tx_hash)) WHERE tx_hash IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('refunds').execute();
}
