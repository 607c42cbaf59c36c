import { sql, type Kysely } from 'kysely';

/**
 * Receipt tracking of signed operations: the validity end the paymaster data carried (so an operation
 * never included can be called `dropped`) and what its UserOperationEvent reported.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('paymaster_usage')
    .addColumn('valid_until', 'timestamptz')
    .addColumn('actual_gas_cost', sql`numeric(78, 0)`)
    .addColumn('actual_gas_used', sql`numeric(78, 0)`)
    .addColumn('tx_hash', 'text')
    .addColumn('block_number', 'bigint')
    .execute();
  // The tracker finds a row by (chain, hash) for every event it reads.
  await sql`CREATE INDEX paymaster_usage_user_op_idx ON paymaster_usage (chain_id, user_op_hash)
    WHERE user_op_hash IS NOT NULL`.execute(db);
  // The dropped sweep only looks at operations still waiting for their receipt.
  await sql`CREATE INDEX paymaster_usage_submitted_idx ON paymaster_usage (chain_id, valid_until)
    WHERE status = 'submitted'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX paymaster_usage_submitted_idx`.execute(db);
  await sql`DROP INDEX paymaster_usage_user_op_idx`.execute(db);
  await db.schema
    .alterTable('paymaster_usage')
    .dropColumn('block_number')
    .dropColumn('tx_hash')
    .dropColumn('actual_gas_used')
    .dropColumn('actual_gas_cost')
    .dropColumn('valid_until')
    .execute();
}
