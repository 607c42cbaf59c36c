import type { Kysely } from 'kysely';

/**
 * `subscription_charges.claim_id` and `claimed_until`: one attempt at a period's charge at a time (issue 42,
 * subscriptions/periodChargeClaim.ts). A workflow reset from the Temporal UI while the period's charge is in
 * flight runs a second attempt beside the first; the claim makes the second wait instead of asking the chain
 * for a second redemption the enforcer would refuse. Null when no attempt holds the period.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('subscription_charges')
    .addColumn('claim_id', 'uuid')
    .addColumn('claimed_until', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('subscription_charges')
    .dropColumn('claim_id')
    .dropColumn('claimed_until')
    .execute();
}
