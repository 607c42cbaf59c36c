import { sql, type Kysely } from 'kysely';
import type { Db } from './client';
import type { Database } from './schema';

/**
 * The rolling failure budget of e-mail login (security review II, finding 2): wrong codes per address
 * (by a hash of it), and the lockouts a spent budget opens. Callers hold `lockEmailLoginAddress` for the
 * transaction, so concurrent wrong tries for one address are counted one after another and never
 * overshoot the budget.
 */

/** Serialises the login tries of one address until the caller's transaction ends. */
export async function lockEmailLoginAddress(db: Kysely<Database>, addressHash: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`email-login:${addressHash}`}, 0))`.execute(db);
}

export async function hasOpenEmailLoginLockout(db: Kysely<Database>, addressHash: string): Promise<boolean> {
  const open = await db
    .selectFrom('email_login_lockouts')
    .select('id')
    .where('address_hash', '=', addressHash)
    .where('cleared_at', 'is', null)
    .executeTakeFirst();
  return open !== undefined;
}

/**
 * Records one wrong code and answers how many the address has had within the window: since `windowStart`
 * or since its last lockout was cleared, whichever is later (a wallet sign-in starts a fresh budget).
 */
export async function recordEmailCodeFailure(
  db: Kysely<Database>,
  { addressHash, now, windowStart }: { addressHash: string; now: Date; windowStart: Date },
): Promise<number> {
  await db.insertInto('email_code_failures').values({ address_hash: addressHash, failed_at: now }).execute();
  const lastCleared = await db
    .selectFrom('email_login_lockouts')
    .select((eb) => eb.fn.max('cleared_at').as('cleared_at'))
    .where('address_hash', '=', addressHash)
    .executeTakeFirst();
  const clearedAt = lastCleared?.cleared_at ? new Date(lastCleared.cleared_at) : undefined;
  const since = clearedAt && clearedAt > windowStart ? clearedAt : windowStart;
  const { failures } = await db
    .selectFrom('email_code_failures')
    .select((eb) => eb.fn.countAll<string>().as('failures'))
    .where('address_hash', '=', addressHash)
    .where('failed_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(failures);
}

export async function openEmailLoginLockout(
  db: Kysely<Database>,
  lockout: { addressHash: string; merchantId: string | null; failures: number; now: Date },
): Promise<void> {
  await db
    .insertInto('email_login_lockouts')
    .values({
      address_hash: lockout.addressHash,
      merchant_id: lockout.merchantId,
      failures: lockout.failures,
      locked_at: lockout.now,
    })
    .execute();
}

/** Clears the open lockouts of a merchant (and of its login address): its owner signed in by wallet. */
export async function clearEmailLoginLockouts(
  db: Db,
  { merchantId, addressHash, now }: { merchantId: string; addressHash: string | undefined; now: Date },
): Promise<number> {
  const { numUpdatedRows } = await db
    .updateTable('email_login_lockouts')
    .set({ cleared_at: now })
    .where('cleared_at', 'is', null)
    .where((eb) =>
      addressHash === undefined
        ? eb('merchant_id', '=', merchantId)
        : eb.or([eb('merchant_id', '=', merchantId), eb('address_hash', '=', addressHash)]),
    )
    .executeTakeFirstOrThrow();
  return Number(numUpdatedRows);
}

/** Deletes wrong-code records older than `cutoff` (outside every rolling window). */
export async function deleteEmailCodeFailuresBefore(db: Db, cutoff: Date): Promise<number> {
  const { numDeletedRows } = await db
    .deleteFrom('email_code_failures')
    .where('failed_at', '<', cutoff)
    .executeTakeFirstOrThrow();
  return Number(numDeletedRows);
}
