import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

/** Merchant session tokens are ES256 JWTs (api/auth/merchantTokens.ts signs and verifies them). */
export const SIGNING_ALGORITHM = 'ES256';

/**
 * A fresh ES256 private JWK with a key id, for `npm start`, `npm run keys` and key rotation. It lives with
 * the settings (it is the value of JWT_PRIVATE_JWK), below the api that reads it (docs/architecture.md "Layers").
 */
export async function generateSigningJwk(
  kid = `key-${new Date().toISOString().slice(0, 10)}-${randomUUID().slice(0, 8)}`,
): Promise<JWK> {
  const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALGORITHM };
}
