import { createHash, createHmac, randomInt } from 'node:crypto';
import { ConfigError, decodeEncryptionKey, type Config } from '../../config';
import type { Db } from '../../db/client';
import { attemptEmailCode, replaceEmailCode, type EmailCodeAttempt } from '../../db/emailCodes';
import type { EmailCodePurpose } from '../../db/schema';

/**
 * One-time e-mail codes (DESIGN §7.2): six digits, valid 10 minutes, at most 5 tries, single use, a new
 * one replacing the old. Only an HMAC of the code is stored, keyed by EMAIL_CODE_HASH_KEY, so a copy of
 * the database does not reveal live codes (a plain hash of six digits would).
 */

export const EMAIL_CODE_TTL_MS = 10 * 60 * 1000;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;

/** How e-mail addresses are compared and keyed: trimmed, lower case. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
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
  issue(db: Db, parameters: IssueEmailCodeParameters): Promise<string>;
  /** Counts one try of `code` against the live code of (purpose, subject). */
  attempt(parameters: {
    purpose: EmailCodePurpose;
    subject: string;
    code: string;
    now: Date;
  }): Promise<EmailCodeAttempt>;
}

export function createEmailCodes({ db, hashKey }: { db: Db; hashKey: Buffer }): EmailCodes {
  const hash = (purpose: EmailCodePurpose, subject: string, code: string) =>
    createHmac('sha256', hashKey).update(`${purpose}\n${subject}\n${code}`).digest('hex');
  return {
    async issue(executor, { purpose, subject, email, merchantId, now }) {
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      await replaceEmailCode(executor, {
        purpose,
        subject,
        email: normaliseEmail(email),
        merchantId,
        codeHash: hash(purpose, subject, code),
        expiresAt: new Date(now.getTime() + EMAIL_CODE_TTL_MS),
        now,
      });
      return code;
    },
    attempt({ purpose, subject, code, now }) {
      return attemptEmailCode(db, {
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
