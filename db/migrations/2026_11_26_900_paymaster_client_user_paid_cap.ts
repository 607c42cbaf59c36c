import type { Kysely } from 'kysely';

/**
 * The most one user-paid (ERC-20) operation of a paymaster client may cost its sender, in USD (issue 26,
 * finding 8): null means the platform default, PAYMASTER_USER_PAID_MAX_OPERATION_USD.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('paymaster_clients')
    .addColumn('user_paid_max_operation_usd', 'numeric(20, 6)')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('paymaster_clients').dropColumn('user_paid_max_operation_usd').execute();
}
