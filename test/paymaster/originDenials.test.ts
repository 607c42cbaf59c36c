import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { clientRateDenial, createPaymasterClient, paymasterRpc, usageRows } from './paymasterApi';

/**
 * Security review III, finding 4: a request with a wrong Origin was answered 403 and stored as a
 * `denied_origin` usage row before the client's request rate was taken: 30 of them, 30 rows, no 429. The
 * rate now comes first, and origin denials are counted per client and UTC hour (as malformed requests
 * are), shown in the overview as `originDenials`; the 403 and the rate-limit answers stay SPEC's.
 */
/** Small, so the bucket's refill (one token every 30 s) cannot reach into the run. */
const PER_MINUTE = 2;
const STUB = { jsonrpc: '2.0', id: 7, method: 'pm_getPaymasterStubData', params: [] };

describe('paymaster requests from a wrong Origin', () => {
  let setupApp: TestApp;
  let limited: TestApp;
  let merchant: SignedInMerchant;
  beforeAll(async () => {
    setupApp = await startTestApp();
    limited = await startTestApp({ PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: String(PER_MINUTE) });
    merchant = await signInNewMerchant(setupApp);
  });
  afterAll(() => Promise.all([setupApp?.close(), limited?.close()]));

  const originCounters = (clientId: string) =>
    limited.db
      .selectFrom('paymaster_malformed_requests')
      .select(['reason', 'count'])
      .where('client_id', '=', clientId)
      .execute();

  it('wrong-Origin requests spend the client request rate and are counted, not stored (security review III, finding 4)', async () => {
    const client = await createPaymasterClient(setupApp, merchant, {
      allowedOrigins: ['https://dapp.example'],
    });
    const answers = [];
    for (let request = 0; request < 30; request++)
      answers.push(await paymasterRpc(limited, client.clientId, STUB, { origin: 'https://evil.example' }));

    // The first PER_MINUTE are refused for their Origin (SPEC: HTTP 403, framework body) …
    for (const refused of answers.slice(0, PER_MINUTE)) {
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({
        statusCode: 403,
        message: expect.stringMatching(/^paymaster_origin_not_allowed/),
        error: 'Forbidden',
      });
    }
    // … the rest by the client's request rate (SPEC: HTTP 200, JSON-RPC -32600, with Retry-After).
    for (const limitedAnswer of answers.slice(PER_MINUTE)) {
      expect(limitedAnswer.status).toBe(200);
      expect(limitedAnswer.body).toEqual(clientRateDenial(7));
      expect(Number(limitedAnswer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // The bundler proxy shares the rate: 429 with its error body.
    const bundler = await limited.request(`/v1/paymaster/bundler/84532`, {
      method: 'POST',
      headers: { 'x-client-id': client.clientId, origin: 'https://evil.example' },
      json: { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
    });
    expect(bundler.status).toBe(429);
    expect(bundler.body).toEqual({
      error: { message: expect.stringMatching(/^paymaster_rate_limit_exceeded/), type: 'error' },
    });

    // No usage row; one counter row for the client and hour, holding the denials answered.
    expect(await usageRows(setupApp, merchant)).toEqual([]);
    expect((await originCounters(client.clientId)).map((row) => [row.reason, Number(row.count)])).toEqual([
      ['paymaster_origin_not_allowed', PER_MINUTE],
    ]);
    // The merchant sees them in the overview, apart from the malformed requests.
    const overview = await setupApp.request('/v1/merchants/me/paymaster/overview', {
      headers: merchant.auth,
    });
    expect(overview.status).toBe(200);
    expect(overview.body.counts.total).toBe(0);
    expect(overview.body.originDenials).toEqual({
      total: PER_MINUTE,
      byClient: [{ clientId: client.clientId, count: PER_MINUTE }],
    });
    expect(overview.body.malformedRequests).toEqual({ total: 0, byClient: [] });
  });
});
