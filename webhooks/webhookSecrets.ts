import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ConfigError, decodeEncryptionKey, type Config } from '../config';

/**
 * Webhook signing secrets: generated as `whsec_` + 32 random bytes (base64url), shown to the merchant
 * once, stored only encrypted (AES-256-GCM, a fresh 96-bit nonce per secret, the endpoint id as
 * associated data so a ciphertext copied onto another endpoint does not decrypt).
 */

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SEALED_VERSION = 'v1';

/** A new signing secret: 256 bits of randomness behind the `whsec_` prefix. */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export class WebhookSecretDecryptionError extends Error {
  override name = 'WebhookSecretDecryptionError';
}

export interface WebhookSecretBox {
  /** `v1.<nonce>.<tag>.<ciphertext>` (base64url parts), bound to the endpoint id. */
  seal(secret: string, endpointId: string): string;
  /** The secret again; throws WebhookSecretDecryptionError for another key, endpoint or a damaged value. */
  open(sealed: string, endpointId: string): string;
}

/** Encrypts and decrypts signing secrets with one 32-byte key. */
export function createWebhookSecretBox(key: Buffer): WebhookSecretBox {
  if (key.length !== 32) throw new RangeError('the webhook secret key must be 32 bytes');
  return {
    seal(secret, endpointId) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(endpointId, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return [SEALED_VERSION, nonce, cipher.getAuthTag(), ciphertext]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed, endpointId) {
      const [version, nonce, tag, ciphertext] = sealed.split('.');
      if (
        version !== SEALED_VERSION ||
        nonce === undefined ||
        tag === undefined ||
        ciphertext === undefined
      ) {
        throw new WebhookSecretDecryptionError('stored webhook secret has an unknown format');
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(endpointId, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([
          decipher.update(Buffer.from(ciphertext, 'base64url')),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new WebhookSecretDecryptionError(
          'stored webhook secret does not decrypt with WEBHOOK_SECRET_ENCRYPTION_KEY',
        );
      }
    },
  };
}

/**
 * The key from WEBHOOK_SECRET_ENCRYPTION_KEY. Production must set it; elsewhere a fixed key derived
 * from a public label keeps `npm start` and the tests zero-configuration, and lets the api and the
 * worker processes agree without sharing anything (it protects nothing, which is fine off production).
 */
export function webhookSecretKeyFromConfig(
  config: Pick<Config, 'NODE_ENV' | 'WEBHOOK_SECRET_ENCRYPTION_KEY'>,
): Buffer {
  if (config.WEBHOOK_SECRET_ENCRYPTION_KEY) return decodeEncryptionKey(config.WEBHOOK_SECRET_ENCRYPTION_KEY)!;
  if (config.NODE_ENV === 'production') {
    throw new ConfigError([
      { variable: 'WEBHOOK_SECRET_ENCRYPTION_KEY', problem: 'is required in production' },
    ]);
  }
  return developmentWebhookSecretKey();
}

/** The fixed key used outside production when WEBHOOK_SECRET_ENCRYPTION_KEY is unset. */
export function developmentWebhookSecretKey(): Buffer {
  return createHash('sha256')
    .update('stablepay development webhook secret key (not for production)')
    .digest();
}
