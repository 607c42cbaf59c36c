import type { Db } from '../../db/client';
import type { EmailCodeAttempt } from '../../db/emailCodes';
import {
  hasOpenEmailLoginLockout,
  lockEmailLoginAddress,
  openEmailLoginLockout,
  recordEmailCodeFailure,
} from '../../db/emailLoginLockouts';
import { findMerchantByVerifiedEmail } from '../../db/merchants';
import type { Logger } from '../../logging/logger';
import { emailAddressHash, type EmailCodes } from './emailCodes';

/**
 * The rolling failure budget of e-mail login (security review II, finding 2): a new code used to forgive
 * the 5 tries of the last, so 5 codes an hour gave 25 guesses an hour forever. Now at most
 * EMAIL_LOGIN_FAILURE_BUDGET wrong codes per address within EMAIL_LOGIN_FAILURE_WINDOW_MS; the one that
 * spends it opens a lockout (recorded, logged without the code or the address), and until the owner signs
 * in by wallet every login code for the address is refused.
 */
export const EMAIL_LOGIN_FAILURE_BUDGET = 10;
export const EMAIL_LOGIN_FAILURE_WINDOW_MS = 24 * 3600 * 1000;

export type LoginCodeTry = EmailCodeAttempt | { outcome: 'locked' };

/** Whether login codes for `address` are refused right now (a start for it mails nothing). */
export function isEmailLoginLocked(db: Db, address: string): Promise<boolean> {
  return hasOpenEmailLoginLockout(db, emailAddressHash(address));
}

/** One try of a login code for `address` (normalised), counted against the address's budget. */
export async function tryLoginCode(
  { db, emailCodes, logger }: { db: Db; emailCodes: EmailCodes; logger: Logger },
  { address, code, now }: { address: string; code: string; now: Date },
): Promise<LoginCodeTry> {
  const addressHash = emailAddressHash(address);
  return db.transaction().execute(async (trx) => {
    await lockEmailLoginAddress(trx, addressHash);
    if (await hasOpenEmailLoginLockout(trx, addressHash)) return { outcome: 'locked' } as const;
    const attempt = await emailCodes.attempt(trx, { purpose: 'login', subject: address, code, now });
    if (attempt.outcome !== 'wrong') return attempt;
    const failures = await recordEmailCodeFailure(trx, {
      addressHash,
      now,
      windowStart: new Date(now.getTime() - EMAIL_LOGIN_FAILURE_WINDOW_MS),
    });
    if (failures >= EMAIL_LOGIN_FAILURE_BUDGET) {
      const merchant = await findMerchantByVerifiedEmail(trx, address);
      await openEmailLoginLockout(trx, { addressHash, merchantId: merchant?.id ?? null, failures, now });
      logger.warn(
        { merchantId: merchant?.id ?? null, addressHash, failures },
        'e-mail login locked after too many wrong codes; a wallet sign-in unlocks it',
      );
    }
    return attempt;
  });
}
