import type { Config } from '../../config';
import type { Db } from '../../db/client';
import { consumeEmailCodeCounters } from '../../db/emailCodeCounters';
import { emailAddressHash } from '../auth/emailCodes';
import { tooManyRequests } from '../rateLimits';

const HOUR_MS = 3600 * 1000;

/**
 * Takes one code from the hourly allowances of the client IP for this address, of the address and of the
 * client IP (EMAIL_CODES_PER_IP_PER_ADDRESS_PER_HOUR, EMAIL_CODES_PER_ADDRESS_PER_HOUR,
 * EMAIL_CODES_PER_IP_PER_HOUR; fixed UTC-hour windows), inside the caller's
 * transaction. Throws 429 with Retry-After when either is used up, and the caller's transaction must
 * roll back. The address is keyed by a hash of its normalised form (so no spelling in another case
 * escapes the limit), and unknown addresses leave no readable trace.
 */
export async function takeCodeSendAllowance(
  db: Db,
  {
    email,
    ip,
    now,
    config,
  }: {
    email: string;
    ip: string;
    now: Date;
    config: Pick<
      Config,
      | 'EMAIL_CODES_PER_ADDRESS_PER_HOUR'
      | 'EMAIL_CODES_PER_IP_PER_HOUR'
      | 'EMAIL_CODES_PER_IP_PER_ADDRESS_PER_HOUR'
    >;
  },
): Promise<void> {
  const windowStart = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  const address = emailAddressHash(email);
  const refused = await consumeEmailCodeCounters(db, {
    windowStart,
    counters: [
      // First, and below the address allowance: one stranger's IP is stopped before it can spend the
      // allowance the owner shares (security review II, finding 3).
      {
        key: `ip-address:${ip}:${address}`,
        limit: Math.min(
          config.EMAIL_CODES_PER_IP_PER_ADDRESS_PER_HOUR,
          config.EMAIL_CODES_PER_ADDRESS_PER_HOUR,
        ),
      },
      { key: `address:${address}`, limit: config.EMAIL_CODES_PER_ADDRESS_PER_HOUR },
      { key: `ip:${ip}`, limit: config.EMAIL_CODES_PER_IP_PER_HOUR },
    ],
  });
  if (!refused) return;
  const retryAfterSec = Math.max(1, Math.ceil((windowStart.getTime() + HOUR_MS - now.getTime()) / 1000));
  throw tooManyRequests('e-mail codes requested', retryAfterSec);
}
