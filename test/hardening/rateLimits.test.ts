import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp, type TestResponse } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { clientRateDenial, createPaymasterClient, paymasterRpc } from '../paymaster/paymasterApi';

/**
 * Abuse limits on the real app: per client IP on the unauthenticated routes, per paymaster client id
 * on the RPC and bundler proxy, and per session on manual webhook re-dispatches. Each limited app
 * has its own small allowances; merchants are set up on an app with the harness's high ones.
 */
const ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const from = (ip: string) => ({ 'x-forwarded-for': ip });

describe('request rate limits', () => {
  let setupApp: TestApp;
  let limited: TestApp;
  let untrustedProxy: TestApp;
  let merchant: SignedInMerchant;
  beforeAll(async () => {
    setupApp = await startTestApp();
    const allowances = {
      RATE_LIMIT_LOGIN_PER_MINUTE: '3',
      RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: '4',
      PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: '2',
      WEBHOOK_RETRIES_PER_SESSION_PER_HOUR: '2',
    };
    limited = await startTestApp(allowances);
    untrustedProxy = await startTestApp({ ...allowances, TRUST_PROXY: '0' });
    merchant = await signInNewMerchant(setupApp);
  });
  afterAll(() => Promise.all([setupApp?.close(), limited?.close(), untrustedProxy?.close()]));

  const expectTooMany = (response: TestResponse) => {
    expect(response.status).toBe(429);
    expect(response.body).toEqual({
      statusCode: 429,
      message: expect.stringMatching(/^Too many .*; retry after \d+ s$/),
      error: 'Too Many Requests',
    });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
  };

  it('login-payload and verify share a per-IP allowance: the fourth call from one IP answers 429, another IP is served', async () => {
    const ip = '198.51.100.10';
    const payload = (headers: Record<string, string>) =>
      limited.request(`/v1/auth/login-payload?address=${ADDRESS}`, { headers });
    expect((await payload(from(ip))).status).toBe(200);
    expect((await payload(from(ip))).status).toBe(200);
    const verify = await limited.request('/v1/auth/verify', { method: 'POST', headers: from(ip), json: {} });
    expect(verify.status).toBe(400);
    expectTooMany(await payload(from(ip)));
    expectTooMany(await limited.request('/v1/auth/verify', { method: 'POST', headers: from(ip), json: {} }));
    expect((await payload(from('198.51.100.11'))).status).toBe(200);
  });

  it('the public session read, status and checkout page share a per-IP allowance, refused before any lookup', async () => {
    const ip = '198.51.100.20';
    const id = randomUUID();
    expect((await limited.request(`/v1/sessions/${id}`, { headers: from(ip) })).status).toBe(404);
    expect((await limited.request(`/v1/sessions/${id}/status`, { headers: from(ip) })).status).toBe(404);
    expect((await limited.request(`/pay/${id}`, { headers: from(ip) })).status).toBe(404);
    expect((await limited.request(`/v1/sessions/${id}/status`, { headers: from(ip) })).status).toBe(404);
    expectTooMany(await limited.request(`/v1/sessions/${id}/status`, { headers: from(ip) }));
    expectTooMany(await limited.request(`/pay/${id}`, { headers: from(ip) }));
    expect((await limited.request(`/v1/sessions/${id}`, { headers: from('198.51.100.21') })).status).toBe(
      404,
    );
    // Authenticated routes are not part of it.
    expect(
      (await limited.request('/v1/merchants/me', { headers: { ...from(ip), ...merchant.auth } })).status,
    ).toBe(200);
  });

  it('with TRUST_PROXY=0 a forged X-Forwarded-For does not buy a fresh allowance', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await untrustedProxy.request(`/v1/auth/login-payload?address=${ADDRESS}`, {
        headers: from(`203.0.113.${attempt}`),
      });
      expect(response.status).toBe(200);
    }
    expectTooMany(
      await untrustedProxy.request(`/v1/auth/login-payload?address=${ADDRESS}`, {
        headers: from('203.0.113.99'),
      }),
    );
  });

  it('the paymaster RPC is limited per client id with the JSON-RPC rate-limit denial; the bundler proxy answers 429; another client is served', async () => {
    const client = await createPaymasterClient(setupApp, merchant);
    const other = await createPaymasterClient(setupApp, merchant);
    const call = (clientId: string, id: number) =>
      paymasterRpc(limited, clientId, { jsonrpc: '2.0', id, method: 'pm_unknown', params: [] });
    expect((await call(client.clientId, 1)).body.error.code).toBe(-32601);
    expect((await call(client.clientId, 2)).body.error.code).toBe(-32601);
    const refused = await call(client.clientId, 3);
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual(clientRateDenial(3));
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const bundler = await limited.request('/v1/paymaster/bundler/84532', {
      method: 'POST',
      headers: { 'x-client-id': client.clientId },
      json: { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
    });
    expect(bundler.status).toBe(429);
    expect(bundler.body).toEqual({
      error: { message: expect.stringMatching(/^paymaster_rate_limit_exceeded/), type: 'error' },
    });
    expect((await call(other.clientId, 1)).body.error.code).toBe(-32601);
  });

  it('retry-webhook is capped per session and UTC hour, across both routes', async () => {
    const sk = { authorization: `Bearer ${await createApiKey(setupApp, merchant)}` };
    const created = await setupApp.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '1', sandboxMode: true },
    });
    expect(created.status).toBe(201);
    const sessionId = created.body.id as string;
    // The session's event, as the deposit detection stores it.
    await setupApp.db
      .insertInto('events')
      .values({
        id: `evt_${randomUUID()}`,
        type: 'session.confirming',
        merchant_id: merchant.merchantId,
        session_id: sessionId,
        payload: '{}',
        created_at: new Date(),
      })
      .execute();
    const retrySk = () =>
      limited.request(`/v1/sessions/${sessionId}/retry-webhook`, { method: 'POST', headers: sk });
    const retryJwt = () =>
      limited.request(`/v1/merchants/me/sessions/${sessionId}/retry-webhook`, {
        method: 'POST',
        headers: merchant.auth,
      });
    expect((await retrySk()).status).toBe(202);
    expect((await retryJwt()).status).toBe(202);
    const refused = await retrySk();
    expectTooMany(refused);
    expect(refused.body.message).toMatch(/^Too many webhook re-dispatches of this session this hour/);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    expectTooMany(await retryJwt());
  });
});
