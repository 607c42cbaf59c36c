import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Every ERC-20 transfer the monitors saw into a deposit address, once per log.
  await db.schema
    .createTable('deposits')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('session_id', 'uuid', (col) => col.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('token_address', 'text', (col) => col.notNull())
    .addColumn('deposit_address', 'text', (col) => col.notNull())
    .addColumn('amount', sql`numeric(78, 0)`, (col) => col.notNull())
    .addColumn('tx_hash', 'text', (col) => col.notNull())
    .addColumn('log_index', 'integer', (col) => col.notNull())
    .addColumn('block_number', 'bigint', (col) => col.notNull())
    // 'accepted': counted towards an awaiting session; 'late': the session had expired or already
    // moved on (kept for operators, who can run retry-forwarder).
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind IN ('accepted', 'late')`))
    .addColumn('settled_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('deposits_log_key', ['chain_id', 'tx_hash', 'log_index'])
    .execute();
  await db.schema
    .createIndex('deposits_session_idx')
    .on('deposits')
    .columns(['session_id', 'chain_id', 'token_address'])
    .execute();
  await sql`CREATE INDEX deposits_unsettled_idx ON deposits (created_at) WHERE settled_at IS NULL`.execute(
    db,
  );

  // The last block each deposit monitor has scanned, per chain.
  await db.schema
    .createTable('chain_monitor_checkpoints')
    .addColumn('monitor_id', 'text', (col) => col.primaryKey())
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('last_scanned_block', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  // On-chain settlement of a session: one row per (session, chain, token) flush, written before and
  // after each transaction so a repeated step after a crash finds what was already done.
  await db.schema
    .createTable('settlements')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('session_id', 'uuid', (col) => col.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('token_address', 'text', (col) => col.notNull())
    .addColumn('forwarder_address', 'text', (col) => col.notNull())
    .addColumn('flush_tx_hash', 'text')
    .addColumn('amount_in', sql`numeric(78, 0)`)
    .addColumn('usde_amount', sql`numeric(78, 0)`)
    .addColumn('bridged', 'boolean')
    .addColumn('shares', sql`numeric(78, 0)`)
    .addColumn('message_nonce', 'bigint')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('settlements_session_idx').on('settlements').column('session_id').execute();
  await sql`CREATE UNIQUE INDEX settlements_pending_flush_key ON settlements (session_id, chain_id, token_address) WHERE flush_tx_hash IS NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('settlements').execute();
  await db.schema.dropTable('chain_monitor_checkpoints').execute();
  await db.schema.dropTable('deposits').execute();
}
