import { sql, type Kysely } from 'kysely';
import type { Db } from './client';
import type { Database, EmailCodePurpose } from './schema';

/**
 * Stores a new e-mail code for (purpose, subject) and keeps only the newest `keep` unused ones: a login
 * start adds a code without taking back the one already mailed (security review II, finding 3), while a
 * verification code replaces the previous one (keep 1: a code mailed to an address the profile no longer
 * holds must not verify the new one).
 */
export async function insertEmailCode(
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
    keep: number;
  },
): Promise<void> {
  await db
    .insertInto('email_codes')
    .values({
      purpose: code.purpose,
      subject: code.subject,
      email: code.email,
      merchant_id: code.merchantId,
      code_hash: code.codeHash,
      attempts: 0,
      expires_at: code.expiresAt,
      used_at: null,
      created_at: code.now,
    })
    .execute();
  await db
    .deleteFrom('email_codes')
    .where('purpose', '=', code.purpose)
    .where('subject', '=', code.subject)
    .where(
      'id',
      'not in',
      db
        .selectFrom('email_codes')
        .select('id')
        .where('purpose', '=', code.purpose)
        .where('subject', '=', code.subject)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(code.keep),
    )
    .execute();
}

export type EmailCodeAttempt =
  | { outcome: 'accepted'; merchantId: string; email: string }
  /** Live codes, none of this value; the try is counted against each. */
  | { outcome: 'wrong' }
  | { outcome: 'expired' }
  /** The allowed tries are used up; even the right code is refused now. */
  | { outcome: 'exhausted' }
  /** No code, or it was used already. */
  | { outcome: 'none' };

/**
 * Tries `codeHash` against the live codes of (purpose, subject): one conditional UPDATE counts the try
 * against every live code (so the tries budget holds across them, however many were mailed) and marks the
 * matching one used, so concurrent tries can neither exceed `maxAttempts` nor use a code twice. When no
 * live code took the try, a read says why.
 */
export async function attemptEmailCode(
  db: Kysely<Database>,
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
    .execute();
  if (tried.length > 0) {
    const match = tried.find((row) => row.matched && row.merchant_id !== null);
    return match
      ? { outcome: 'accepted', merchantId: match.merchant_id!, email: match.email }
      : { outcome: 'wrong' };
  }
  const codes = await db
    .selectFrom('email_codes')
    .select('attempts')
    .where('purpose', '=', purpose)
    .where('subject', '=', subject)
    .where('used_at', 'is', null)
    .execute();
  if (codes.some((code) => code.attempts >= maxAttempts)) return { outcome: 'exhausted' };
  if (codes.length > 0) return { outcome: 'expired' };
  return { outcome: 'none' };
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
