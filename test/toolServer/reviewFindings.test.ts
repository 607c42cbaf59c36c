import { readFile } from 'node:fs/promises';
import { startTestApp, type TestApp } from '../harness/app';
import { freshEmail, waitForCode } from '../harness/mailbox';
import { signInNewMerchant, verifyMerchantEmail } from '../harness/merchants';
import { resultBody, resultText, startToolServer, type ToolServerUnderTest } from './toolServerProcess';

/**
 * Security review II, finding 12 (the tool server's part), over stdio against the real API: a code that
 * is not 6 digits is OTP_INVALID, a short Retry-After is waited out once, and logout revokes the token.
 */
describe('the tool server (security review II, finding 12)', () => {
  let app: TestApp;
  /** One login token a second: a 429 here says Retry-After: 2. */
  let limited: TestApp;
  /** One login token a minute: a 429 here says Retry-After: 60, too long to wait. */
  let slow: TestApp;
  const servers: ToolServerUnderTest[] = [];
  beforeAll(async () => {
    [app, limited, slow] = await Promise.all([
      startTestApp(),
      startTestApp({ RATE_LIMIT_LOGIN_PER_MINUTE: '30', TRUST_PROXY: '0' }),
      startTestApp({ RATE_LIMIT_LOGIN_PER_MINUTE: '1', TRUST_PROXY: '0' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await Promise.all([app?.close(), limited?.close(), slow?.close()]);
  });

  async function toolServer(api: TestApp = app) {
    const server = await startToolServer({ apiUrl: api.baseUrl });
    servers.push(server);
    return server;
  }

  async function signedIn(server: ToolServerUnderTest) {
    const merchant = await signInNewMerchant(app);
    const email = freshEmail('agent');
    await verifyMerchantEmail(app, merchant, email);
    await server.call('login_start', { email });
    const code = await waitForCode(email, { count: 2 });
    expect(resultBody(await server.call('login_verify', { email, code }))).toMatchObject({ signedIn: true });
    return { merchant, email };
  }

  it('finding 12a — a code that is not 6 digits is OTP_INVALID, not an HTTP 400', async () => {
    const server = await toolServer();
    for (const code of ['12345', '1234567', 'abcdef', '']) {
      const result = await server.call('login_verify', { email: freshEmail(), code });
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/^OTP_INVALID: /);
    }
  });

  it('finding 12b — a 429 with a short Retry-After is waited out and retried once; a long one is reported', async () => {
    const server = await toolServer(limited);
    // Spend this client's login allowance (the tool server calls from the same address).
    let spent = 0;
    while (
      (await limited.request('/v1/auth/login-payload?address=0x70997970C51812dc3A010C7d01b50e0d17dc79C8'))
        .status !== 429
    )
      if (++spent > 100) throw new Error('the login allowance never ran out');
    const started = Date.now();
    const result = await server.call('login_start', { email: freshEmail() });
    expect(resultText(result)).not.toMatch(/429/);
    expect(resultBody(result)).toEqual({ sent: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);

    const reporting = await toolServer(slow);
    expect(resultBody(await reporting.call('login_start', { email: freshEmail() }))).toEqual({ sent: true });
    const refused = await reporting.call('login_start', { email: freshEmail() });
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toMatch(/^HTTP 429 Too Many Requests: .*\(retry after \d+ s\)$/);
  });

  it('finding 12f — the logout tool calls POST /v1/auth/logout: the token it held answers 401 afterwards', async () => {
    const server = await toolServer();
    await signedIn(server);
    const { session } = JSON.parse(await readFile(server.credentialsFile, 'utf8')) as {
      session: { token: string };
    };
    const auth = { authorization: `Bearer ${session.token}` };
    expect((await app.request('/v1/merchants/me', { headers: auth })).status).toBe(200);
    expect(resultBody(await server.call('logout'))).toEqual({ signedOut: true });
    expect((await app.request('/v1/merchants/me', { headers: auth })).status).toBe(401);
    expect(resultText(await server.call('get_profile'))).toMatch(/^LOGIN_REQUIRED: /);
    // Logging out again, with nothing stored, still succeeds.
    expect(resultBody(await server.call('logout'))).toEqual({ signedOut: true });
  });
});
