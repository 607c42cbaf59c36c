import type { Kysely } from 'kysely';

/**
 * `refundAddress` given at session creation (issue 41): where refunds of the session go when the refund
 * names no address, so no claim link is needed. Checksummed; null when not given (a refund without an
 * address then waits for the payer's claim, never defaulting to the deposit's sender).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('refund_address', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('refund_address').execute();
}
