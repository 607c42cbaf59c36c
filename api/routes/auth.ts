import { isAddress } from 'viem';
import { z } from 'zod';
import { consumeLoginNonce, insertLoginNonce, isLoginNonceUsable } from '../../db/loginNonces';
import { clearEmailLoginLockouts } from '../../db/emailLoginLockouts';
import { upsertMerchantByWallet } from '../../db/merchants';
import { emailAddressHash } from '../auth/emailCodes';
import type { AppContext } from '../appContext';
import { checkSignedLoginPayload, createLoginPayload, loginPayloadSchema } from '../auth/siweLogin';
import { unauthorized } from '../httpErrors';
import type { VerifiedMerchantToken } from '../auth/merchantTokens';
import { revokeSessionToken } from '../../db/sessionTokenRevocations';
import { defineRoute, type AnyRoute } from '../routing/route';
import { loginResultSchema } from './loginResult';
import { toMerchantProfile } from './merchants/profileModel';
import { MAX_STORED_CHAIN_ID } from '../routing/chainIdQuery';

/**
 * | GET  | /v1/auth/login-payload | none | 200 SIWE payload + message; 400 bad address/chainId |
 * | POST | /v1/auth/verify        | none | 200 JWT; 400 payload or signature absent; 401 when verification fails |
 * | POST | /v1/auth/logout        | JWT  | 204; that token answers 401 everywhere afterwards (docs/decisions.md "Security review II — accounts and domains")        |
 */
const loginPayloadQuery = z.object({
  address: z
    .string({ error: 'is required' })
    .refine((value) => isAddress(value, { strict: false }), 'must be a 0x wallet address'),
  chainId: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, 'must be a positive integer chain id')
    .transform(Number)
    // The nonce row stores it as Postgres `integer`: larger ones are 400, not a 500 from the insert.
    .refine((chainId) => chainId <= MAX_STORED_CHAIN_ID, `must be at most ${MAX_STORED_CHAIN_ID}`)
    .optional(),
});

const loginPayloadResponse = loginPayloadSchema.extend({ message: z.string() }).meta({ id: 'LoginPayload' });

const verifyBody = z.object({
  payload: z
    .record(z.string(), z.unknown(), { error: 'is required (the object from login-payload)' })
    .describe('The object login-payload answered, as it is (`message` included or left out)'),
  signature: z.string({ error: 'is required' }).min(1, 'is required'),
});

const verifyResponse = loginResultSchema;

const failureMessages = {
  malformed_payload: 'Login payload is not one this service issued',
  message_mismatch: 'Login payload message does not match its fields',
  unusable_nonce: 'Login nonce is unknown, expired or already used',
  wrong_domain: 'Login payload was issued for another domain',
  expired: 'Login payload has expired',
  bad_signature: 'Signature does not match the login payload',
} as const;

export function authRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/auth/login-payload',
      auth: 'none',
      perIpLimit: 'login',
      tag: 'Login',
      audience: 'dashboard',
      summary: 'Issue a Sign-In with Ethereum payload and the exact message to sign',
      query: loginPayloadQuery,
      responses: {
        200: { description: 'Payload to sign', schema: loginPayloadResponse },
        400: { description: 'Bad address or chainId' },
      },
      async handler({ query }) {
        const payload = createLoginPayload({
          address: query.address,
          chainId: query.chainId ?? app.config.LOGIN_DEFAULT_CHAIN_ID,
          publicBaseUrl: app.config.PUBLIC_BASE_URL,
          now: app.now(),
        });
        await insertLoginNonce(app.db, {
          nonce: payload.nonce,
          address: payload.address,
          chainId: payload.chainId,
          expiresAt: new Date(payload.expirationTime),
        });
        return { status: 200, body: payload };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/auth/verify',
      auth: 'none',
      perIpLimit: 'login',
      tag: 'Login',
      audience: 'dashboard',
      summary: 'Verify a signed login payload; creates or updates the merchant and returns a session token',
      body: verifyBody,
      responses: {
        200: { description: 'Merchant session token', schema: verifyResponse },
        400: { description: 'payload or signature absent' },
        401: { description: 'Signature, domain, expiry or nonce does not hold' },
      },
      async handler({ body }) {
        const now = app.now();
        const checked = await checkSignedLoginPayload({
          payload: body.payload,
          signature: body.signature,
          publicBaseUrl: app.config.PUBLIC_BASE_URL,
          now,
          publicClients: app.publicClients,
          nonceUsable: (payload) =>
            isLoginNonceUsable(app.db, {
              nonce: payload.nonce,
              address: payload.address,
              chainId: payload.chainId,
              now,
            }),
        });
        if (!checked.ok) throw unauthorized(failureMessages[checked.failure]);
        const { payload } = checked;
        const consumed = await consumeLoginNonce(app.db, {
          nonce: payload.nonce,
          address: payload.address,
          chainId: payload.chainId,
          now,
        });
        if (!consumed) throw unauthorized('Login nonce is unknown, expired or already used');

        const merchant = await upsertMerchantByWallet(app.db, {
          walletAddress: payload.address,
          payoutAddress: payload.address,
        });
        // The owner proved the wallet: e-mail login, locked by wrong codes, works again.
        const unlocked = await clearEmailLoginLockouts(app.db, {
          merchantId: merchant.id,
          addressHash:
            merchant.email && merchant.email_verified_at ? emailAddressHash(merchant.email) : undefined,
          now,
        });
        if (unlocked > 0)
          app.logger.info({ merchantId: merchant.id }, 'e-mail login unlocked by a wallet sign-in');
        const { token, expiresAt } = await app.tokens.issue({
          id: merchant.id,
          walletAddress: payload.address,
        });
        return {
          status: 200,
          body: { token, expiresAt: expiresAt.toISOString(), merchant: toMerchantProfile(merchant) },
        };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/auth/logout',
      auth: 'jwt',
      tag: 'Login',
      audience: 'dashboard',
      summary: 'Sign out: the session token used answers 401 everywhere from now on',
      responses: {
        204: { description: 'Signed out; the token is listed as revoked until it expires' },
      },
      async handler({ merchantId, ctx }) {
        const session = ctx.state.sessionToken as VerifiedMerchantToken;
        await revokeSessionToken(app.db, {
          tokenId: session.tokenId,
          merchantId,
          expiresAt: session.expiresAt,
        });
        // This process at once; the others through the notification.
        app.sessionRevocations.add(session.tokenId, session.expiresAt);
        return { status: 204 };
      },
    }),
  ];
}
