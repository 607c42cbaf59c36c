import { randomBytes, randomUUID } from 'node:crypto';
import { ConfigError, loadConfig } from '../config';
import {
  createWebhookSecretBox,
  generateWebhookSecret,
  webhookSecretKeyFromConfig,
  WebhookSecretDecryptionError,
} from './webhookSecrets';

describe('webhook signing secrets', () => {
  const box = createWebhookSecretBox(randomBytes(32));
  const endpointId = randomUUID();

  it('are whsec_ plus 32 random bytes, different every time', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('round-trip through encryption, and the stored form does not contain the secret', () => {
    const secret = generateWebhookSecret();
    const sealed = box.seal(secret, endpointId);
    expect(sealed).not.toContain(secret.slice(6));
    expect(sealed).toMatch(/^v1\./);
    expect(box.open(sealed, endpointId)).toBe(secret);
    expect(box.seal(secret, endpointId)).not.toBe(sealed); // a fresh nonce per encryption
  });

  it('do not decrypt under another endpoint id, another key, or after a flipped byte', () => {
    const sealed = box.seal(generateWebhookSecret(), endpointId);
    expect(() => box.open(sealed, randomUUID())).toThrow(WebhookSecretDecryptionError);
    expect(() => createWebhookSecretBox(randomBytes(32)).open(sealed, endpointId)).toThrow(
      WebhookSecretDecryptionError,
    );
    const parts = sealed.split('.');
    const ciphertext = Buffer.from(parts[3]!, 'base64url');
    ciphertext.writeUInt8(ciphertext.readUInt8(0) ^ 1, 0);
    expect(() =>
      box.open([...parts.slice(0, 3), ciphertext.toString('base64url')].join('.'), endpointId),
    ).toThrow(WebhookSecretDecryptionError);
    expect(() => box.open('garbage', endpointId)).toThrow(WebhookSecretDecryptionError);
  });

  it('take their key from WEBHOOK_SECRET_ENCRYPTION_KEY as hex or base64', () => {
    const key = randomBytes(32);
    expect(
      webhookSecretKeyFromConfig(loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEY: key.toString('hex') })),
    ).toEqual(key);
    expect(
      webhookSecretKeyFromConfig(loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEY: key.toString('base64') })),
    ).toEqual(key);
    expect(() => loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEY: 'abcd' })).toThrow(
      /WEBHOOK_SECRET_ENCRYPTION_KEY: must be 32 bytes/,
    );
    expect(() => loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEY: randomBytes(31).toString('hex') })).toThrow(
      ConfigError,
    );
  });

  it('need an explicit key in production and derive the same development key everywhere else', () => {
    expect(() =>
      webhookSecretKeyFromConfig(
        loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pay.example.com' }),
      ),
    ).toThrow(/WEBHOOK_SECRET_ENCRYPTION_KEY: is required in production/);
    const development = webhookSecretKeyFromConfig(loadConfig({ NODE_ENV: 'development' }));
    expect(development).toHaveLength(32);
    expect(webhookSecretKeyFromConfig(loadConfig({ NODE_ENV: 'test' }))).toEqual(development);
  });
});
