import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '../db/client';
import { dashboardSignInCodeHash } from '../db/dashboardSignInCodes';

/** How long a sign-in link works after it is issued. */
export const DASHBOARD_SIGN_IN_LINK_TTL_MS = 60_000;

/** The dashboard page that exchanges a link's code (dashboard/src/pages/SignInLink.tsx). */
export const SIGN_IN_LINK_PATH = '/dashboard/sign-in-link';

/**
 * A dashboard sign-in link for a merchant (security review III, finding 3): a one-time code, written
 * straight to the database as its hash (no route issues codes: this needs the database, which only the
 * dev stack and its tools hold), in the URL fragment so it reaches no server log. The page asks before
 * it signs in; the code works once, for a minute.
 */
export async function issueDashboardSignInLink(
  db: Db,
  { apiUrl, merchantId, now = new Date() }: { apiUrl: string; merchantId: string; now?: Date },
): Promise<{ url: string; code: string; expiresAt: Date }> {
  const code = `dsc_${randomBytes(32).toString('base64url')}`;
  const expiresAt = new Date(now.getTime() + DASHBOARD_SIGN_IN_LINK_TTL_MS);
  // Links of the past are of no use to anyone: each new one clears them.
  await db.deleteFrom('dashboard_sign_in_codes').where('expires_at', '<=', now).execute();
  await db
    .insertInto('dashboard_sign_in_codes')
    .values({ code_hash: dashboardSignInCodeHash(code), merchant_id: merchantId, expires_at: expiresAt })
    .execute();
  return { url: `${apiUrl}${SIGN_IN_LINK_PATH}#code=${code}`, code, expiresAt };
}

/** A link for the dev merchant, written through a connection of its own (`npm start`, `npm run dashboard-link`). */
export async function devDashboardLink(
  databaseUrl: string,
  apiUrl: string,
  merchantId: string,
): Promise<string> {
  const db = createDb({ connectionString: databaseUrl, maxConnections: 1 });
  try {
    return (await issueDashboardSignInLink(db, { apiUrl, merchantId })).url;
  } finally {
    await db.destroy();
  }
}
