import { sql } from 'kysely';
import type { Db } from '../db/client';

/**
 * One attempt at a period's charge at a time (issue 42). The period index already makes the charge row,
 * the session and the chain's answer idempotent; what it cannot stop alone is two attempts running at
 * once — a workflow reset from the Temporal UI while the period's redemption is still unmined starts a
 * second attempt beside the first, and a chain read cannot see the first's pending transaction. The
 * attempt claims the period's charge row before it reads the chain; a second attempt finds it claimed
 * and is retried later (by then the first is recorded, and the retry answers its transaction).
 *
 * The claim is a lease in the database's clock, so a worker that died holding it does not hold the period
 * for ever. It outlasts the charge activity's 5-minute start-to-close; and the holder renews it under the
 * executor key's lock just before it broadcasts (renewPeriodChargeClaim), so a holder that stalled past
 * its lease sends nothing, and one that sends has the lease for its receipt wait too.
 */

const CLAIM_LEASE = sql`interval '10 minutes'`;

/** True when this attempt now holds the period (no claim, or a lapsed one); never on a redeemed charge. */
export async function claimPeriodCharge(db: Db, chargeId: string, claimId: string): Promise<boolean> {
  const claimed = await db
    .updateTable('subscription_charges')
    .set({ claim_id: claimId, claimed_until: sql`now() + ${CLAIM_LEASE}` })
    .where('id', '=', chargeId)
    .where('status', '<>', 'redeemed')
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', sql<Date>`now()`)]))
    .returning('id')
    .executeTakeFirst();
  return claimed !== undefined;
}

/** Extends a claim still held (answers false when it lapsed and another attempt took it, or it was let go). */
export async function renewPeriodChargeClaim(db: Db, chargeId: string, claimId: string): Promise<boolean> {
  const renewed = await db
    .updateTable('subscription_charges')
    .set({ claimed_until: sql`now() + ${CLAIM_LEASE}` })
    .where('id', '=', chargeId)
    .where('claim_id', '=', claimId)
    .where('claimed_until', '>', sql<Date>`now()`)
    .returning('id')
    .executeTakeFirst();
  return renewed !== undefined;
}

/** Lets the period go (the attempt recorded its outcome, or gave up). */
export async function releasePeriodChargeClaim(db: Db, chargeId: string, claimId: string): Promise<void> {
  await db
    .updateTable('subscription_charges')
    .set({ claim_id: null, claimed_until: null })
    .where('id', '=', chargeId)
    .where('claim_id', '=', claimId)
    .execute();
}
