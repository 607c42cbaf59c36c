/** How long paymaster data stays valid: long enough to reach a bundler, short enough to expire unused. */
export const PAYMASTER_DATA_VALIDITY_SEC = 600;

/** The validity window of paymaster data made at `now` (unix seconds): valid at once, for PAYMASTER_DATA_VALIDITY_SEC. */
export function sponsorshipWindow(now: Date): { validAfter: number; validUntil: number } {
  return { validAfter: 0, validUntil: Math.floor(now.getTime() / 1000) + PAYMASTER_DATA_VALIDITY_SEC };
}
