import { sql, type Kysely } from 'kysely';

/**
 * Self-serve top-ups: a payment session the merchant pays to itself, credited to the prepaid ledger
 * (reference `topup:<id>`) when the session completes. `credited_at` is the only stored state; pending,
 * expired and failed are read from the linked session.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('topups')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // Insertion order: the list is newest first by it (created_at can tie).
    .addColumn('seq', 'bigint', (col) => col.notNull().generatedAlwaysAsIdentity())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('session_id', 'uuid', (col) =>
      col.notNull().unique().references('sessions.id').onDelete('cascade'),
    )
    .addColumn('amount_usd', sql`numeric(20, 6)`, (col) => col.notNull())
    .addColumn('credited_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('topups_amount_check', sql`amount_usd > 0`)
    .execute();
  await db.schema
    .createIndex('topups_merchant_seq_idx')
    .on('topups')
    .columns(['merchant_id', 'seq desc'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('topups').execute();
}
