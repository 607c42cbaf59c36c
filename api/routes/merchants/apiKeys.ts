import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { insertApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from '../../../db/apiKeys';
import type { AppContext } from '../../appContext';
import { hashApiKey } from '../../auth/authenticate';
import { notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';

/**
 * | GET    | /v1/merchants/me/api-keys      | 200 list (hash and prefix only) |
 * | POST   | /v1/merchants/me/api-keys      | 201 key with raw secret shown once |
 * | DELETE | /v1/merchants/me/api-keys/{id} | 200 revocation result |
 */
const RAW_KEY_PREFIX = 'sk_live_';
/** sk_live_ plus the first 4 characters of the secret: enough to tell keys apart, useless to an attacker. */
const DISPLAY_PREFIX_LENGTH = RAW_KEY_PREFIX.length + 4;

/** `sk_live_` + 32 random bytes, base64url: 256 bits of secret. */
export function generateRawApiKey(): string {
  return `${RAW_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

const createBody = z.object({ label: z.string().trim().min(1).max(100).optional() }).strict();
const idParams = z.object({ id: z.string().uuid() });

const createdKey = z
  .object({
    id: z.string(),
    label: z.string().nullable(),
    prefix: z.string(),
    rawKey: z.string(),
    createdAt: z.string(),
  })
  .meta({ id: 'CreatedApiKey' });
const keySummary = z
  .object({
    id: z.string(),
    label: z.string().nullable(),
    prefix: z.string(),
    keyHash: z.string().describe('Hex SHA-256 of the raw key'),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'ApiKeySummary' });
const revocation = z
  .object({ id: z.string(), revoked: z.literal(true), revokedAt: z.string() })
  .meta({ id: 'ApiKeyRevocation' });

function toSummary(row: ApiKeyRow): z.infer<typeof keySummary> {
  return {
    id: row.id,
    label: row.label,
    prefix: row.prefix,
    keyHash: row.key_hash,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

export function apiKeyRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/api-keys',
      auth: 'jwt',
      tag: 'API keys',
      audience: 'dashboard',
      summary: 'List API keys (hash and prefix only, never the raw key)',
      responses: { 200: { description: 'Keys', schema: z.object({ data: z.array(keySummary) }) } },
      async handler({ merchantId }) {
        return { status: 200, body: { data: (await listApiKeys(app.db, merchantId)).map(toSummary) } };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/merchants/me/api-keys',
      auth: 'jwt',
      tag: 'API keys',
      audience: 'dashboard',
      summary: 'Create a secret API key; the raw key is returned once',
      body: createBody,
      responses: { 201: { description: 'Created key with its raw secret', schema: createdKey } },
      async handler({ merchantId, body }) {
        const rawKey = generateRawApiKey();
        const row = await insertApiKey(app.db, {
          merchantId,
          label: body.label ?? null,
          prefix: rawKey.slice(0, DISPLAY_PREFIX_LENGTH),
          keyHash: hashApiKey(rawKey),
        });
        return {
          status: 201,
          body: {
            id: row.id,
            label: row.label,
            prefix: row.prefix,
            rawKey,
            createdAt: row.created_at.toISOString(),
          },
        };
      },
    }),

    defineRoute({
      method: 'delete',
      path: '/v1/merchants/me/api-keys/:id',
      auth: 'jwt',
      tag: 'API keys',
      audience: 'dashboard',
      summary: 'Revoke an API key (idempotent)',
      params: idParams,
      responses: { 200: { description: 'Revoked', schema: revocation }, 404: { description: 'Unknown key' } },
      async handler({ merchantId, params }) {
        const row = await revokeApiKey(app.db, merchantId, params.id);
        if (!row?.revoked_at) throw notFound('API key not found');
        // This process drops it now; the trigger's notification tells every other one (and this one again).
        app.apiKeys.invalidate(row.key_hash);
        return { status: 200, body: { id: row.id, revoked: true, revokedAt: row.revoked_at.toISOString() } };
      },
    }),
  ];
}
