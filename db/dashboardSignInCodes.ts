import { createHash } from 'node:crypto';
import type { Db } from './client';

/** What is stored of a dashboard sign-in code: its SHA-256 (hex). */
export const dashboardSignInCodeHash = (code: string) => createHash('sha256').update(code).digest('hex');

export type DashboardSignInCodeRedemption =
  { outcome: 'accepted'; merchantId: string } | { outcome: 'expired' | 'used' | 'unknown' };

/**
 * Spends a dashboard sign-in code: accepted once, while unexpired at `now` (one conditional update, so
 * two concurrent exchanges cannot both win); otherwise why not.
 */
export async function redeemDashboardSignInCode(
  db: Db,
  { code, now }: { code: string; now: Date },
): Promise<DashboardSignInCodeRedemption> {
  const codeHash = dashboardSignInCodeHash(code);
  const spent = await db
    .updateTable('dashboard_sign_in_codes')
    .set({ used_at: now })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('merchant_id')
    .executeTakeFirst();
  if (spent) return { outcome: 'accepted', merchantId: spent.merchant_id };
  const row = await db
    .selectFrom('dashboard_sign_in_codes')
    .select(['used_at'])
    .where('code_hash', '=', codeHash)
    .executeTakeFirst();
  if (!row) return { outcome: 'unknown' };
  return { outcome: row.used_at ? 'used' : 'expired' };
}
