import { randomBytes } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Db } from '../../db/client';
import { isVerifiedYieldHostname } from '../../db/yieldDomains';
import { renderYieldSiteNotFound } from '../../web/yield/renderYieldSite';
import { setStrictPageHeaders } from '../../web/strictPageHeaders';
import { customHostnameReader } from '../customDomainHosts';

/**
 * On a merchant's verified custom domain only its yield site is served (GET or HEAD `/`); every other
 * path — the API, the dashboard, the checkout, the previews of other sites — answers the site's HTML 404
 * page there (security review II, finding 1), so a merchant's domain never fronts the service itself.
 * Hosts that cannot be a custom domain (the API's own, an IP address, a single label) skip the lookup; the
 * host is read as the site route reads it, whatever its spelling (trailing dot, port, case: security review
 * III, finding 5).
 */
export function serveOnlyYieldSitesOnCustomDomains({
  db,
  publicBaseUrl,
}: {
  db: Db;
  publicBaseUrl: string;
}): Middleware {
  const customHostnameOf = customHostnameReader(publicBaseUrl);
  return async (ctx, next) => {
    const hostname = customHostnameOf(ctx.host);
    if (hostname === undefined) return next();
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.path === '/') return next();
    if (!(await isVerifiedYieldHostname(db, hostname))) return next();
    const nonce = randomBytes(16).toString('base64');
    setStrictPageHeaders(ctx, nonce);
    ctx.status = 404;
    ctx.type = 'html';
    ctx.body = renderYieldSiteNotFound({ nonce });
  };
}
