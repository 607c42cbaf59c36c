import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';
import type { ActiveApiKey } from '../../db/apiKeys';
import { unauthorized } from '../httpErrors';
import type { MerchantTokenService } from './merchantTokens';
import type { SessionRevocationChecks } from './sessionRevocations';

const API_KEY_PREFIX = 'sk_';

function bearerToken(authorization: string): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1]! : null;
}

/** SHA-256 hex of a raw API key: what the database stores and indexes. */
export function hashApiKey(rawKey: string): string {
  return createHash('sha256').update(rawKey).digest('hex');
}

/**
 * Dashboard routes: only a merchant session token (JWT), and not one signed out (POST /v1/auth/logout):
 * `revocations` is the LISTEN/NOTIFY-kept list beside the API-key cache (api/auth/sessionRevocations.ts).
 */
export function requireMerchantToken(
  tokens: MerchantTokenService,
  revocations: Pick<SessionRevocationChecks, 'isRevoked'>,
): Middleware {
  return async (ctx, next) => {
    const token = bearerToken(ctx.get('authorization'));
    if (!token) throw unauthorized('Missing bearer token');
    if (token.startsWith(API_KEY_PREFIX))
      throw unauthorized('This route requires a merchant session token, not an API key');
    const verified = await tokens.inspect(token);
    if (!verified || (await revocations.isRevoked(verified.tokenId)))
      throw unauthorized('Invalid or expired session token');
    ctx.state.merchantId = verified.merchantId;
    ctx.state.sessionToken = verified;
    return next();
  };
}

/**
 * Integration routes (session create, webhook management): only a secret API key. `findActiveKey` is the
 * lookup by key hash: the LISTEN/NOTIFY-invalidated cache in the api (api/auth/apiKeyCache.ts).
 */
export function requireApiKey(
  findActiveKey: (keyHash: string) => Promise<ActiveApiKey | undefined>,
): Middleware {
  return async (ctx, next) => {
    const token = bearerToken(ctx.get('authorization'));
    if (!token) throw unauthorized('Missing bearer token');
    if (!token.startsWith(API_KEY_PREFIX))
      throw unauthorized('This route requires a secret API key (sk_...)');
    const key = await findActiveKey(hashApiKey(token));
    if (!key) throw unauthorized('Unknown or revoked API key');
    ctx.state.merchantId = key.merchantId;
    return next();
  };
}
