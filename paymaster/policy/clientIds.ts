import { randomBytes } from 'node:crypto';
import type { PaymasterEnvironment } from '../../db/schema';

/**
 * Publishable paymaster client ids: `pmc_live_` (mainnets) or `pmc_test_` (testnets) followed by
 * 32 lower-case hex characters (128 random bits). The prefix is the key's network class.
 */
export const CLIENT_ID_PATTERN = /^pmc_(live|test)_[0-9a-f]{32}$/;

export function generateClientId(environment: PaymasterEnvironment): string {
  return `pmc_${environment}_${randomBytes(16).toString('hex')}`;
}

/** The environment a well-formed client id names, or undefined when the id is malformed. */
export function environmentOfClientId(clientId: string): PaymasterEnvironment | undefined {
  return CLIENT_ID_PATTERN.exec(clientId)?.[1] as PaymasterEnvironment | undefined;
}
