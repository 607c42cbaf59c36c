import { sql, type Kysely } from 'kysely';

/**
 * Monthly prepaid-gas statements: produced once per merchant and closed UTC month by the
 * `monthly-statements` schedule, then served as they were made. The figures are kept beside the PDF
 * so support can answer "what did the statement say" without parsing it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('billing_statements')
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('month', 'text', (col) => col.notNull())
    .addColumn('opening_balance_usd', sql`numeric(20, 6)`, (col) => col.notNull())
    .addColumn('credits_usd', sql`numeric(20, 6)`, (col) => col.notNull())
    .addColumn('debits_usd', sql`numeric(20, 6)`, (col) => col.notNull())
    .addColumn('closing_balance_usd', sql`numeric(20, 6)`, (col) => col.notNull())
    .addColumn('entry_count', 'integer', (col) => col.notNull())
    .addColumn('pdf', 'bytea', (col) => col.notNull())
    .addColumn('generated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('billing_statements_pkey', ['merchant_id', 'month'])
    .addCheckConstraint('billing_statements_month_check', sql`month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'`)
    .addCheckConstraint(
      'billing_statements_balance_check',
      sql`closing_balance_usd = opening_balance_usd + credits_usd - debits_usd`,
    )
    .execute();
  // Statements read a merchant's ledger by time: the balance before a month and the month's entries.
  await db.schema
    .createIndex('prepaid_ledger_entries_merchant_created_idx')
    .on('prepaid_ledger_entries')
    .columns(['merchant_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('prepaid_ledger_entries_merchant_created_idx').execute();
  await db.schema.dropTable('billing_statements').execute();
}
