import { sql, type Kysely } from 'kysely';

/**
 * Paymaster policies II (issue 43, docs/paymaster.md "Sponsorship policies (issue 43)"): a client's sponsorship rules as an ordered list of
 * policies, the first whose rules all pass sponsoring. Every client gets its default policy (position
 * 0, every chain of the client, the merchant's shared allowlist, no window, no budget), existing
 * clients here and new ones by the trigger, so what is sponsored does not change: the default policy
 * says exactly what the client said before policies existed. The merchant's deny rules and limits stay
 * where they are and apply to every policy.
 *
 * `chain_ids` null: every chain the client allows. `allowlist` null: the merchant's shared allowlist
 * (`/v1/paymaster/allowlist`); otherwise the policy's own entries `[{ chainId, contractAddress, label }]`.
 * Positions are unique per client; the constraint is deferred so a reorder can swap them in one
 * transaction. Usage rows name the policy that sponsored them (no foreign key: a deleted policy's
 * history keeps its id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('paymaster_policies')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('client_id', 'uuid', (col) =>
      col.notNull().references('paymaster_clients.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('position', 'integer', (col) => col.notNull())
    .addColumn('chain_ids', sql`integer[]`)
    .addColumn('allowlist', 'jsonb')
    .addColumn('starts_at', 'timestamptz')
    .addColumn('ends_at', 'timestamptz')
    .addColumn('budgets', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('approval_webhook', 'jsonb')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('paymaster_policies_position_check', sql`position >= 0`)
    .addCheckConstraint(
      'paymaster_policies_window_check',
      sql`starts_at IS NULL OR ends_at IS NULL OR ends_at > starts_at`,
    )
    .addCheckConstraint(
      'paymaster_policies_chains_check',
      sql`chain_ids IS NULL OR cardinality(chain_ids) > 0`,
    )
    .execute();
  await sql`
    ALTER TABLE paymaster_policies ADD CONSTRAINT paymaster_policies_client_position_key
    UNIQUE (client_id, position) DEFERRABLE INITIALLY DEFERRED`.execute(db);
  await sql`CREATE INDEX paymaster_policies_merchant_id_idx ON paymaster_policies (merchant_id)`.execute(db);

  await sql`
    INSERT INTO paymaster_policies (merchant_id, client_id, name, position)
    SELECT merchant_id, id, 'Default policy', 0 FROM paymaster_clients`.execute(db);
  await sql`
    CREATE FUNCTION create_default_paymaster_policy() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO paymaster_policies (merchant_id, client_id, name, position)
      VALUES (NEW.merchant_id, NEW.id, 'Default policy', 0);
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER paymaster_clients_default_policy
    AFTER INSERT ON paymaster_clients
    FOR EACH ROW EXECUTE FUNCTION create_default_paymaster_policy()`.execute(db);

  await db.schema.alterTable('paymaster_usage').addColumn('policy_id', 'uuid').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('paymaster_usage').dropColumn('policy_id').execute();
  await sql`DROP TRIGGER paymaster_clients_default_policy ON paymaster_clients`.execute(db);
  await sql`DROP FUNCTION create_default_paymaster_policy()`.execute(db);
  await db.schema.dropTable('paymaster_policies').execute();
}
