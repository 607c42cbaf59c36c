import { sql, type Kysely } from 'kysely';

/**
 * Managed paymaster: publishable clients, per-merchant policies (contract allowlist, deny rules),
 * one usage row per RPC decision, and the prepaid gas ledger whose balance gates mainnet sponsorship.
 * Addresses are stored lower-case so equality is plain text equality.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('paymaster_clients')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (col) => col.notNull().unique())
    .addColumn('environment', 'text', (col) => col.notNull())
    .addColumn('label', 'text', (col) => col.notNull())
    .addColumn('allowed_origins', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('allowed_chain_ids', sql`integer[]`, (col) => col.notNull())
    .addColumn('gas_mode', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .addCheckConstraint('paymaster_clients_environment_check', sql`environment IN ('live', 'test')`)
    .addCheckConstraint(
      'paymaster_clients_gas_mode_check',
      sql`gas_mode IN ('sponsored', 'user_paid', 'both')`,
    )
    .addCheckConstraint('paymaster_clients_chains_check', sql`cardinality(allowed_chain_ids) > 0`)
    .execute();
  await db.schema
    .createIndex('paymaster_clients_merchant_id_idx')
    .on('paymaster_clients')
    .column('merchant_id')
    .execute();

  await db.schema
    .createTable('paymaster_allowlist_entries')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('contract_address', 'text', (col) => col.notNull())
    .addColumn('label', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('paymaster_allowlist_entries_pair_key', [
      'merchant_id',
      'chain_id',
      'contract_address',
    ])
    .execute();

  await db.schema
    .createTable('paymaster_deny_rules')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('chain_id', 'integer', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('address', 'text', (col) => col.notNull())
    .addColumn('label', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('paymaster_deny_rules_kind_check', sql`kind IN ('sender', 'target')`)
    .addUniqueConstraint('paymaster_deny_rules_rule_key', ['merchant_id', 'chain_id', 'kind', 'address'])
    .execute();

  await db.schema
    .createTable('paymaster_usage')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // Insertion order: the usage list pages by it (a timestamp can tie, an identity cannot).
    .addColumn('seq', 'bigint', (col) => col.notNull().unique().generatedAlwaysAsIdentity())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('method', 'text')
    .addColumn('chain_id', 'integer')
    .addColumn('mode', 'text')
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('reason', 'text')
    .addColumn('sender', 'text')
    .addColumn('entry_point', 'text')
    .addColumn('user_op_hash', 'text')
    .addColumn('targets', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('paymaster_usage_mode_check', sql`mode IN ('sponsored', 'user_paid')`)
    .addCheckConstraint(
      'paymaster_usage_status_check',
      sql`status IN ('denied_target', 'denied_upstream', 'denied_billing_balance', 'denied_merchant_limit',
        'denied_gas_mode', 'denied_chain', 'denied_entrypoint', 'denied_origin', 'denied_malformed',
        'denied_rate_limit', 'denied_spend_cap', 'denied_global_cap', 'denied_price_unavailable',
        'denied_merchant_rule', 'submitted', 'onchain_success', 'onchain_reverted', 'dropped')`,
    )
    .execute();
  await db.schema
    .createIndex('paymaster_usage_merchant_seq_idx')
    .on('paymaster_usage')
    .columns(['merchant_id', 'seq desc'])
    .execute();

  await db.schema
    .createTable('prepaid_ledger_entries')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('direction', 'text', (col) => col.notNull())
    .addColumn('amount_usd', sql`numeric(20, 6)`, (col) => col.notNull())
    .addColumn('description', 'text', (col) => col.notNull())
    // What the entry settles (a top-up id, a usage id): at most one entry per reference.
    .addColumn('reference', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('prepaid_ledger_entries_direction_check', sql`direction IN ('credit', 'debit')`)
    .addCheckConstraint('prepaid_ledger_entries_amount_check', sql`amount_usd > 0`)
    .addUniqueConstraint('prepaid_ledger_entries_reference_key', ['merchant_id', 'reference'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('prepaid_ledger_entries').execute();
  await db.schema.dropTable('paymaster_usage').execute();
  await db.schema.dropTable('paymaster_deny_rules').execute();
  await db.schema.dropTable('paymaster_allowlist_entries').execute();
  await db.schema.dropTable('paymaster_clients').execute();
}
