import type { Middleware } from 'koa';
import type { Db } from '../../db/client';
import { authenticateClient, checkOrigin } from '../../paymaster/clientChecks';
import { describeDenial } from '../../paymaster/denials';
import { NO_USAGE_FACTS, recordPaymasterDenial } from '../../paymaster/usageRecords';
import { forbidden, unauthorized } from '../httpErrors';
import type { Logger } from '../../logging/logger';

/**
 * Paymaster routes (CLIENT): the publishable client id from `X-Client-Id` (or, on paths under
 * `queryClientIdPathPrefix`, the `clientId` query parameter; the header wins), then the Origin check.
 * Missing, unknown or revoked id → 401 `paymaster_unauthorized`; Origin missing or unlisted while
 * allowedOrigins is set → 403 `paymaster_origin_not_allowed` (recorded as a `denied_origin` usage row).
 * Both answer with the framework-style body. Sets `ctx.state.paymasterClient` and `ctx.state.merchantId`.
 */
export function requirePaymasterClient(
  db: Db,
  logger: Logger,
  { queryClientIdPathPrefix }: { queryClientIdPathPrefix?: string } = {},
): Middleware {
  return async (ctx, next) => {
    const fromQuery =
      queryClientIdPathPrefix &&
      ctx.path.startsWith(queryClientIdPathPrefix) &&
      typeof ctx.query.clientId === 'string'
        ? ctx.query.clientId
        : undefined;
    const authenticated = await authenticateClient(db, ctx.get('x-client-id') || fromQuery);
    if (!authenticated.ok) throw unauthorized(describeDenial(authenticated.denial));
    const { client } = authenticated;

    const origin = checkOrigin(client, ctx.get('origin') || undefined);
    if (!origin.ok) {
      await recordPaymasterDenial(
        { db, logger: ctx.state.log ?? logger },
        client,
        NO_USAGE_FACTS,
        'denied_origin',
        origin.denial.code,
      );
      throw forbidden(describeDenial(origin.denial));
    }
    ctx.state.paymasterClient = client;
    ctx.state.merchantId = client.merchantId;
    return next();
  };
}
