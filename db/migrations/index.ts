import type { Migration } from 'kysely';
import * as merchantAccounts from './2026_11_22_001_merchant_accounts';
import * as paymentSessions from './2026_11_22_002_payment_sessions';
import * as paymaster from './2026_11_22_010_paymaster';

/** Every migration, keyed by its ordered name. Add new files here; never edit one that has shipped. */
export const migrations: Record<string, Migration> = {
  '2026_11_22_001_merchant_accounts': merchantAccounts,
  '2026_11_22_002_payment_sessions': paymentSessions,
  '2026_11_22_010_paymaster': paymaster,
};
