import { z } from 'zod';
import type { EmailCodeAttempt } from '../../db/emailCodes';
import { HttpError } from '../httpErrors';

/**
 * How a refused e-mail code answers: the framework body plus `code` (`otp_invalid` or `otp_expired`).
 * A wrong code and no code at all read the same, so the answer never tells whether an address is known.
 */

export const OTP_FAILURE_CODES = ['otp_invalid', 'otp_expired'] as const;

/** The `code` field of a request that carries an e-mailed code. */
export const emailCodeField = z
  .string({ error: 'is required' })
  .regex(/^\d{6}$/, 'must be the 6-digit code from the e-mail');

export const otpErrorSchema = z
  .object({
    statusCode: z.number().int(),
    message: z.string(),
    error: z.string(),
    code: z.enum(OTP_FAILURE_CODES),
  })
  .meta({ id: 'OtpError' });

const FAILURES = {
  wrong: { code: 'otp_invalid', message: 'Code is not valid' },
  none: { code: 'otp_invalid', message: 'Code is not valid' },
  exhausted: { code: 'otp_invalid', message: 'Too many wrong tries for this code; request a new one' },
  expired: { code: 'otp_expired', message: 'Code has expired; request a new one' },
  locked: {
    code: 'otp_invalid',
    message:
      'Too many wrong codes for this address: e-mail login is locked until you sign in with your wallet',
  },
} as const;

export type RefusedEmailCode = Exclude<EmailCodeAttempt, { outcome: 'accepted' }> | { outcome: 'locked' };

/** The refusal of a code with `status` (401 for login, 400 where a session token already authenticates). */
export function otpError(status: 400 | 401, attempt: RefusedEmailCode | { outcome: 'none' }): HttpError {
  const { code, message } = FAILURES[attempt.outcome];
  return new HttpError(status, message, {}, code);
}
