import { sql, type Kysely } from 'kysely';
import type { Db } from './client';
import type { Database, EmailCodePurpose } from './schema';

/** One live e-mail code per (purpose, subject): issuing one replaces the previous code. */
export async function replaceEmailCode(
  db: Kysely<Database>,
  code: {
    purpose: EmailCodePurpose;
    subject: string;
    email: string;
    /** Null: a decoy for an unknown login address, so it behaves like a known one but never succeeds. */
    merchantId: string | null;
    codeHash: string;
    expiresAt: Date;
    now: Date;
  },
): Promise<void> {
  const row = {
    email: code.email,
    merchant_id: code.merchantId,
    code_hash: code.codeHash,
    attempts: 0,
    expires_at: code.expiresAt,
    used_at: null,
    created_at: code.now,
  };
  await db
    .insertInto('email_codes')
    .values({ purpose: code.purpose, subject: code.subject, ...row })
    .onConflict((conflict) => conflict.columns(['purpose', 'subject']).doUpdateSet(row))
    .execute();
}

export type EmailCodeAttempt =
  | { outcome: 'accepted'; merchantId: string; email: string }
  /** A live code, another value; the try is counted. */
  | { outcome: 'wrong' }
  | { outcome: 'expired' }
  /** The allowed tries are used up; even the right code is refused now. */
  | { outcome: 'exhausted' }
  /** No code, or it was used already. */
  | { outcome: 'none' };

/**
 * Tries `codeHash` against the live code of (purpose, subject): one conditional UPDATE counts the try and,
 * when it matches, marks the code used, so concurrent tries can neither exceed `maxAttempts` nor use a
 * code twice. When no live code took the try, a read says why.
 */
export async function attemptEmailCode(
  db: Db,
  {
    purpose,
    subject,
    codeHash,
    maxAttempts,
    now,
  }: { purpose: EmailCodePurpose; subject: string; codeHash: string; maxAttempts: number; now: Date },
): Promise<EmailCodeAttempt> {
  const matches = sql<boolean>`code_hash = ${codeHash}`;
  const tried = await db
    .updateTable('email_codes')
    .set({
      attempts: sql`attempts + 1`,
      used_at: sql`CASE WHEN ${matches} THEN ${now}::timestamptz END`,
    })
    .where('purpose', '=', purpose)
    .where('subject', '=', subject)
    .where('used_at', 'is', null)
    .where('attempts', '<', maxAttempts)
    .where('expires_at', '>', now)
    .returning(['merchant_id', 'email', matches.as('matched')])
    .executeTakeFirst();
  if (tried) {
    return tried.matched && tried.merchant_id !== null
      ? { outcome: 'accepted', merchantId: tried.merchant_id, email: tried.email }
      : { outcome: 'wrong' };
  }
  const code = await db
    .selectFrom('email_codes')
    .select(['used_at', 'attempts', 'expires_at'])
    .where('purpose', '=', purpose)
    .where('subject', '=', subject)
    .executeTakeFirst();
  if (!code || code.used_at) return { outcome: 'none' };
  if (code.attempts >= maxAttempts) return { outcome: 'exhausted' };
  return { outcome: 'expired' };
}

export async function deleteEmailCode(
  db: Kysely<Database>,
  { purpose, subject }: { purpose: EmailCodePurpose; subject: string },
): Promise<void> {
  await db.deleteFrom('email_codes').where('purpose', '=', purpose).where('subject', '=', subject).execute();
}

/** Deletes e-mail codes that expired before `cutoff` (an expired code can only answer otp_expired). */
export async function deleteEmailCodesExpiredBefore(db: Db, cutoff: Date): Promise<number> {
  const { numDeletedRows } = await db
    .deleteFrom('email_codes')
    .where('expires_at', '<', cutoff)
    .executeTakeFirstOrThrow();
  return Number(numDeletedRows);
}
