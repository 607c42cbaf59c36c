import { createHash, createHmac, randomInt } from 'node:crypto';
import { ConfigError, decodeEncryptionKey, type Config } from '../../config';
import type { Kysely } from 'kysely';
import { attemptEmailCode, insertEmailCode, type EmailCodeAttempt } from '../../db/emailCodes';
import type { Database, EmailCodePurpose } from '../../db/schema';

/**
 * One-time e-mail codes (docs/decisions.md "Merchant accounts"): six digits, valid 10 minutes, at most 5 tries, single use. A new
 * login code joins the newest LIVE_LOGIN_CODES (a stranger's start cannot take back the owner's mailed
 * code; a wrong try counts against each live one); a new verification code replaces the old. Only an HMAC of the code is stored, keyed by EMAIL_CODE_HASH_KEY, so a copy of
 * the database does not reveal live codes (a plain hash of six digits would).
 */

export const EMAIL_CODE_TTL_MS = 10 * 60 * 1000;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;
/** Login codes of one address that stay valid together (docs/decisions.md, security review II). */
export const LIVE_LOGIN_CODES = 3;

/** How e-mail addresses are compared and keyed: trimmed, lower case. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** How limits and lockouts key an address: a hash of its normalised form (no readable trace of it). */
export function emailAddressHash(email: string): string {
  return createHash('sha256').update(normaliseEmail(email)).digest('hex');
}

export interface IssueEmailCodeParameters {
  purpose: EmailCodePurpose;
  /** Lower-case e-mail (login) or merchant id (verify_email). */
  subject: string;
  email: string;
  /** Null for a login code of an unknown address (stored, never mailed, never accepted). */
  merchantId: string | null;
  now: Date;
}

export interface EmailCodes {
  /** Stores a fresh code for (purpose, subject) through `db` (a transaction, if the caller has one); returns it. */
  issue(db: Kysely<Database>, parameters: IssueEmailCodeParameters): Promise<string>;
  /** Counts one try of `code` against the live codes of (purpose, subject), through `db` (or a transaction). */
  attempt(
    db: Kysely<Database>,
    parameters: {
      purpose: EmailCodePurpose;
      subject: string;
      code: string;
      now: Date;
    },
  ): Promise<EmailCodeAttempt>;
}

export function createEmailCodes({ hashKey }: { hashKey: Buffer }): EmailCodes {
  const hash = (purpose: EmailCodePurpose, subject: string, code: string) =>
    createHmac('sha256', hashKey).update(`${purpose}\n${subject}\n${code}`).digest('hex');
  return {
    async issue(executor, { purpose, subject, email, merchantId, now }) {
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      await insertEmailCode(executor, {
        purpose,
        subject,
        email: normaliseEmail(email),
        merchantId,
        codeHash: hash(purpose, subject, code),
        expiresAt: new Date(now.getTime() + EMAIL_CODE_TTL_MS),
        now,
        keep: purpose === 'login' ? LIVE_LOGIN_CODES : 1,
      });
      return code;
    },
    attempt(executor, { purpose, subject, code, now }) {
      return attemptEmailCode(executor, {
        purpose,
        subject,
        codeHash: hash(purpose, subject, code),
        maxAttempts: EMAIL_CODE_MAX_ATTEMPTS,
        now,
      });
    },
  };
}

/** EMAIL_CODE_HASH_KEY, required in production once codes are mailed; elsewhere a fixed development key. */
export function emailCodeHashKeyFromConfig(
  config: Pick<Config, 'NODE_ENV' | 'SMTP_URL' | 'EMAIL_CODE_HASH_KEY'>,
): Buffer {
  if (config.EMAIL_CODE_HASH_KEY) return decodeEncryptionKey(config.EMAIL_CODE_HASH_KEY)!;
  if (config.NODE_ENV === 'production' && config.SMTP_URL) {
    throw new ConfigError([
      { variable: 'EMAIL_CODE_HASH_KEY', problem: 'is required in production when SMTP_URL is set' },
    ]);
  }
  return createHash('sha256').update('stablepay development e-mail code key (not for production)').digest();
}
