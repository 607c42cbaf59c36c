import { startTestApp, type TestApp } from '../harness/app';
import { freshEmail, waitForCode } from '../harness/mailbox';
import { createApiKey, signInNewMerchant, verifyMerchantEmail } from '../harness/merchants';
import { generateSigningJwk } from '../../config/signingJwk';

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

  it('e-mail verification and login log requests but no code, token or address', async () => {
    const merchant = await signInNewMerchant(app);
    const email = freshEmail('logged');
    await verifyMerchantEmail(app, merchant, email);
    const verificationCode = await waitForCode(email);
    await app.request('/v1/auth/email/start', { method: 'POST', json: { email } });
    const loginCode = await waitForCode(email, { count: 2 });
    const login = await app.request('/v1/auth/email/verify', {
      method: 'POST',
      json: { email, code: loginCode },
    });
    expect(login.status).toBe(200);

    const logs = app.logLines.join('\n');
    expect(logs).toContain('/v1/auth/email/verify');
    expect(logs).toContain('e-mail sent');
    for (const code of [verificationCode, loginCode]) {
      expect(logs).not.toMatch(new RegExp(`(?<![0-9])${code}(?![0-9])`));
    }
    for (const secret of [login.body.token, merchant.token, email]) expect(logs).not.toContain(secret);
  });
});
