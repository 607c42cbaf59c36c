import { sql, type Kysely } from 'kysely';

/**
 * What the charging workflow needs kept (issue 42):
 * - `subscriptions.first_charge_at` (the end of the trial, or the subscription's start) and
 *   `permission_start_at` (the permission's start time, from which the ERC20PeriodTransferEnforcer counts
 *   its periods): the charge schedule, fixed at subscribe time (subscriptions/chargeSchedule.ts);
 * - `subscription_charges.from_block`, the block a period's charge row was opened at: a retry of the
 *   charge, days later or after a worker died between the redemption and its record, looks for the
 *   period's transfer from there (subscriptions/periodCharge.ts), never from the chain's start.
 * Null on rows written before them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('subscriptions')
    .addColumn('first_charge_at', 'timestamptz')
    .addColumn('permission_start_at', 'timestamptz')
    .execute();
  await db.schema
    .alterTable('subscription_charges')
    .addColumn('from_block', sql`numeric(78,0)`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('subscription_charges').dropColumn('from_block').execute();
  await db.schema
    .alterTable('subscriptions')
    .dropColumn('first_charge_at')
    .dropColumn('permission_start_at')
    .execute();
}
