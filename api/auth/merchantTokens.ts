import { createHash, randomUUID } from 'node:crypto';
import { generateKeyPair, importJWK, jwtVerify, SignJWT, errors, type JWK, type KeyLike } from 'jose';
import type { Config } from '../../config';
import { ConfigError } from '../../config';
import { SIGNING_ALGORITHM } from '../../config/signingJwk';

/**
 * Merchant session tokens: ES256 JWTs with a key id. Verification accepts the signing key and
 * every key in JWT_VERIFICATION_JWKS, so a key can rotate without logging everyone out.
 */
export interface MerchantTokenService {
  issue(merchant: { id: string; walletAddress: string }): Promise<{ token: string; expiresAt: Date }>;
  /** The merchant id, or null for a malformed, expired, foreign-signed or otherwise invalid token. */
  verify(token: string): Promise<string | null>;
  /** Like verify, with the token's id (its jti, else a hash of it: what logout lists) and expiry. */
  inspect(token: string): Promise<VerifiedMerchantToken | null>;
}

const ALGORITHM = SIGNING_ALGORITHM;
const AUDIENCE = 'merchant-dashboard';

export interface VerifiedMerchantToken {
  merchantId: string;
  tokenId: string;
  expiresAt: Date;
}

export async function createMerchantTokenService(config: Config): Promise<MerchantTokenService> {
  const signing = await loadSigningKey(config);
  const verificationKeys = new Map<string, KeyLike | Uint8Array>([[signing.kid, signing.publicKey]]);
  for (const jwk of parseJwkList(config.JWT_VERIFICATION_JWKS)) {
    verificationKeys.set(jwk.kid!, await importJWK({ ...jwk, d: undefined }, ALGORITHM));
  }
  const issuer = config.PUBLIC_BASE_URL;

  return {
    async issue(merchant) {
      const expiresAt = new Date(Date.now() + config.JWT_TTL_SEC * 1000);
      const token = await new SignJWT({ wallet: merchant.walletAddress })
        .setProtectedHeader({ alg: ALGORITHM, kid: signing.kid, typ: 'JWT' })
        .setSubject(merchant.id)
        .setIssuer(issuer)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setJti(randomUUID())
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(signing.privateKey);
      return { token, expiresAt };
    },
    async verify(token) {
      return (await inspect(token))?.merchantId ?? null;
    },
    inspect,
  };

  async function inspect(token: string): Promise<VerifiedMerchantToken | null> {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = header.kid ? verificationKeys.get(header.kid) : undefined;
          if (!key) throw new errors.JWKSNoMatchingKey();
          return key;
        },
        { algorithms: [ALGORITHM], issuer, audience: AUDIENCE },
      );
      if (typeof payload.sub !== 'string') return null;
      return {
        merchantId: payload.sub,
        tokenId:
          typeof payload.jti === 'string' ? payload.jti : createHash('sha256').update(token).digest('hex'),
        expiresAt: new Date((payload.exp ?? 0) * 1000),
      };
    } catch {
      return null;
    }
  }
}

async function loadSigningKey(
  config: Config,
): Promise<{ kid: string; privateKey: KeyLike | Uint8Array; publicKey: KeyLike | Uint8Array }> {
  if (!config.JWT_PRIVATE_JWK) {
    if (config.NODE_ENV === 'production') {
      throw new ConfigError([{ variable: 'JWT_PRIVATE_JWK', problem: 'is required in production' }]);
    }
    // Outside production a per-process key keeps `npm start` zero-configuration (the dev stack persists one).
    const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
    return { kid: `ephemeral-${randomUUID()}`, privateKey, publicKey };
  }
  const jwk = parseJwk(config.JWT_PRIVATE_JWK, 'JWT_PRIVATE_JWK');
  if (!jwk.d)
    throw new ConfigError([{ variable: 'JWT_PRIVATE_JWK', problem: 'must be a private key (with "d")' }]);
  const { d: _d, ...publicJwk } = jwk;
  return {
    kid: jwk.kid!,
    privateKey: await importJWK(jwk, ALGORITHM),
    publicKey: await importJWK(publicJwk, ALGORITHM),
  };
}

function parseJwk(raw: string, variable: string): JWK {
  let jwk: JWK;
  try {
    jwk = JSON.parse(raw) as JWK;
  } catch {
    throw new ConfigError([{ variable, problem: 'must be a JSON Web Key' }]);
  }
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.kid) {
    throw new ConfigError([{ variable, problem: 'must be an EC P-256 JWK with a "kid"' }]);
  }
  return jwk;
}

function parseJwkList(raw: string | undefined): JWK[] {
  if (!raw) return [];
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    throw new ConfigError([{ variable: 'JWT_VERIFICATION_JWKS', problem: 'must be a JSON array of JWKs' }]);
  }
  if (!Array.isArray(list)) {
    throw new ConfigError([{ variable: 'JWT_VERIFICATION_JWKS', problem: 'must be a JSON array of JWKs' }]);
  }
  return list.map((entry) => parseJwk(JSON.stringify(entry), 'JWT_VERIFICATION_JWKS'));
}
