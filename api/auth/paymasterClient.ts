import type { Middleware } from 'koa';
import type { Db } from '../../db/client';
import { authenticateClient, checkOrigin, type FindActiveClient } from '../../paymaster/policy/clientChecks';
import { describeDenial } from '../../paymaster/rpc/denials';
import { NO_USAGE_FACTS, recordPaymasterDenial } from '../../paymaster/rpc/usageRecords';
import { jsonRpcError } from '../../paymaster/rpc/jsonRpc';
import { forbidden, unauthorized } from '../httpErrors';
import type { Logger } from '../../logging/logger';
import type { RequestRate } from '../rateLimits';

/**
 * Paymaster routes (CLIENT): the publishable client id from `X-Client-Id` (or, on paths under
 * `queryClientIdPathPrefix`, the `clientId` query parameter; the header wins): missing, unknown or revoked
 * → 401 `paymaster_unauthorized`. Then the client's request rate (`requestRate`,
 * PAYMASTER_RPC_PER_CLIENT_PER_MINUTE): past it the JSON-RPC path answers HTTP 200 with -32600
 * `Policy denied: paymaster_rate_limit_exceeded (client request rate)` (SPEC's rate-limit denial; nothing
 * recorded, which is load the limit sheds) and the bundler path 429 with its error body, both with
 * Retry-After. Then the Origin check: missing or unlisted while allowedOrigins is set → 403
 * `paymaster_origin_not_allowed`, added to the client's hourly counter (`paymaster_malformed_requests`,
 * reason `paymaster_origin_not_allowed`), not a usage row. 401 and 403 answer with the framework-style
 * body. Sets `ctx.state.paymasterClient` and `ctx.state.merchantId`.
 */
export function requirePaymasterClient(
  db: Db,
  logger: Logger,
  {
    findActiveClient,
    queryClientIdPathPrefix,
    jsonRpcPath,
    requestRate,
  }: {
    /** The client lookup: the api's cache (invalidated by LISTEN/NOTIFY), or the database. */
    findActiveClient: FindActiveClient;
    queryClientIdPathPrefix?: string;
    jsonRpcPath?: string;
    requestRate?: RequestRate;
  },
): Middleware {
  return async (ctx, next) => {
    const fromQuery =
      queryClientIdPathPrefix &&
      ctx.path.startsWith(queryClientIdPathPrefix) &&
      typeof ctx.query.clientId === 'string'
        ? ctx.query.clientId
        : undefined;
    const authenticated = await authenticateClient(findActiveClient, ctx.get('x-client-id') || fromQuery);
    if (!authenticated.ok) throw unauthorized(describeDenial(authenticated.denial));
    const { client } = authenticated;

    const retryAfterSec = await requestRate?.take(client.clientId);
    if (retryAfterSec !== undefined) {
      const message = `Policy denied: paymaster_rate_limit_exceeded (client request rate; retry after ${retryAfterSec} s)`;
      ctx.set('retry-after', String(retryAfterSec));
      if (ctx.path === jsonRpcPath) {
        const body = ctx.state.body as { id?: unknown } | undefined;
        const id = typeof body?.id === 'string' || typeof body?.id === 'number' ? body.id : null;
        ctx.status = 200;
        ctx.body = jsonRpcError(id, { code: -32600, message });
      } else {
        ctx.status = 429;
        ctx.body = { error: { message: message.replace('Policy denied: ', ''), type: 'error' } };
      }
      return;
    }
    // After the rate: a stranger's wrong Origin spends the client's allowance like any request, and is
    // counted per client and hour, not stored as a row each (security review III, finding 4).
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
