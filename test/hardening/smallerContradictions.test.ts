import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';

/**
 * Security review II, finding 12 (the API's part): deploy-options without chainId, the OpenAPI
 * document's 503 on attaching a domain and its CSV/PDF content types, and logout revoking the JWT on
 * every api process within a second (the revocation list beside the API-key cache, migration 660).
 */
describe('smaller contradictions (security review II, finding 12)', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    [first, second] = await Promise.all([startTestApp(), startTestApp()]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  const me = (app: TestApp, merchant: SignedInMerchant) =>
    app.request('/v1/merchants/me', { headers: merchant.auth });

  it('finding 12c — deploy-options without chainId answers 400 saying chainId is required', async () => {
    const merchant = await signInNewMerchant(first);
    const response = await first.request('/v1/merchants/me/yield-deployments/deploy-options', {
      headers: merchant.auth,
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('Validation failed: chainId: is required');
    const sets = await first.request('/v1/merchants/me/yield-deployments/contract-sets', {
      headers: merchant.auth,
    });
    expect(sets.status).toBe(400);
    expect(sets.body.message).toBe('Validation failed: chainId: is required');
  });

  it('finding 12d/12e — the OpenAPI document declares the 503 of POST …/domains and the CSV and PDF content', async () => {
    const document = (await first.request('/openapi.json')).body;
    const attach = document.paths['/v1/merchants/me/yield-deployments/{id}/domains'].post;
    expect(attach.responses['503']).toBeDefined();
    const csv = document.paths['/v1/merchants/me/balance/charges.csv'].get.responses['200'];
    expect(csv.content['text/csv'].schema).toMatchObject({ type: 'string' });
    const pdf = document.paths['/v1/merchants/me/balance/statement.pdf'].get.responses['200'];
    expect(pdf.content['application/pdf'].schema).toMatchObject({ type: 'string', format: 'binary' });
  });

  it('finding 12f — POST /v1/auth/logout answers 204, after which that token answers 401 on every api process within 1 s; other tokens keep working', async () => {
    const merchant = await signInNewMerchant(first);
    const other = await signInNewMerchant(first, merchant.account);
    // Both processes have seen the token work (and would serve it from any cache).
    expect((await me(first, merchant)).status).toBe(200);
    expect((await me(second, merchant)).status).toBe(200);

    const loggedOut = await first.request('/v1/auth/logout', { method: 'POST', headers: merchant.auth });
    expect(loggedOut.status).toBe(204);
    const since = Date.now();
    expect((await me(first, merchant)).status).toBe(401);
    for (;;) {
      const answer = await me(second, merchant);
      if (answer.status === 401) {
        expect(answer.body).toEqual({
          statusCode: 401,
          message: 'Invalid or expired session token',
          error: 'Unauthorized',
        });
        break;
      }
      expect(Date.now() - since).toBeLessThan(1_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(Date.now() - since).toBeLessThan(1_000);
    // Everywhere: JWT routes of every kind, and logout itself.
    expect(
      (
        await second.request('/v1/merchants/me/api-keys', {
          method: 'POST',
          headers: merchant.auth,
          json: {},
        })
      ).status,
    ).toBe(401);
    expect((await first.request('/v1/auth/logout', { method: 'POST', headers: merchant.auth })).status).toBe(
      401,
    );
    // The merchant's other session is not touched.
    expect((await me(second, other)).status).toBe(200);
    expect((await first.request('/v1/auth/logout', { method: 'POST' })).status).toBe(401);

    const document = (await first.request('/openapi.json')).body;
    expect(document.paths['/v1/auth/logout'].post.responses['204']).toBeDefined();
  });
});
