import { sql, type Kysely } from 'kysely';

/**
 * The merchant's running prepaid balance, kept by a trigger in the same transaction as every ledger
 * entry, so reading a balance is one row instead of a sum over the whole ledger. The ledger stays the
 * source of truth: entries are append-only (an UPDATE is refused) and a check recomputes every balance
 * from them (`findPrepaidBalanceDrift`). Existing balances are filled in from the ledger.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('prepaid_balances')
    .addColumn('merchant_id', 'uuid', (col) =>
      col.primaryKey().references('merchants.id').onDelete('cascade'),
    )
    .addColumn('balance_usd', sql`numeric(20, 6)`, (col) => col.notNull())
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  await sql`
    CREATE FUNCTION apply_prepaid_ledger_entry() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      -- The upsert's row lock serialises concurrent entries of one merchant: the sum stays exact.
      INSERT INTO prepaid_balances AS balance (merchant_id, balance_usd)
      VALUES (NEW.merchant_id, CASE NEW.direction WHEN 'credit' THEN NEW.amount_usd ELSE -NEW.amount_usd END)
      ON CONFLICT (merchant_id)
      DO UPDATE SET balance_usd = balance.balance_usd + excluded.balance_usd, updated_at = now();
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER prepaid_ledger_entries_running_balance
    AFTER INSERT ON prepaid_ledger_entries
    FOR EACH ROW EXECUTE FUNCTION apply_prepaid_ledger_entry()`.execute(db);

  await sql`
    CREATE FUNCTION refuse_prepaid_ledger_update() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'prepaid ledger entries are append-only: correct a balance with a new entry';
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER prepaid_ledger_entries_append_only
    BEFORE UPDATE ON prepaid_ledger_entries
    FOR EACH ROW EXECUTE FUNCTION refuse_prepaid_ledger_update()`.execute(db);

  await sql`
    INSERT INTO prepaid_balances (merchant_id, balance_usd)
    SELECT merchant_id, sum(CASE direction WHEN 'credit' THEN amount_usd ELSE -amount_usd END)
    FROM prepaid_ledger_entries
    GROUP BY merchant_id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER prepaid_ledger_entries_append_only ON prepaid_ledger_entries`.execute(db);
  await sql`DROP FUNCTION refuse_prepaid_ledger_update()`.execute(db);
  await sql`DROP TRIGGER prepaid_ledger_entries_running_balance ON prepaid_ledger_entries`.execute(db);
  await sql`DROP FUNCTION apply_prepaid_ledger_entry()`.execute(db);
  await db.schema.dropTable('prepaid_balances').execute();
}
