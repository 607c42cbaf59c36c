import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { generateSigningJwk } from '../../api/auth/merchantTokens';

describe('secrets never reach the logs', () => {
  let app: TestApp;
  let signingKey: Awaited<ReturnType<typeof generateSigningJwk>>;
  beforeAll(async () => {
    signingKey = await generateSigningJwk('log-test');
    app = await startTestApp({ LOG_LEVEL: 'trace', JWT_PRIVATE_JWK: JSON.stringify(signingKey) });
  });
  afterAll(() => app.close());

  it('login, key creation and key use log requests but no token, raw key, signature or signing key', async () => {
    const merchant = await signInNewMerchant(app);
    const rawKey = await createApiKey(app, merchant, 'log check');
    await app.request('/v1/merchants/me/api-keys', { headers: merchant.auth });
    await app.request('/v1/merchants/me', { headers: { authorization: `Bearer ${rawKey}` } });

    const logs = app.logLines.join('\n');
    expect(app.logLines.length).toBeGreaterThanOrEqual(5);
    expect(logs).toContain('/v1/auth/verify');
    for (const secret of [merchant.token, rawKey, rawKey.slice(8), signingKey.d!]) {
      expect(logs).not.toContain(secret);
    }
  });
});
