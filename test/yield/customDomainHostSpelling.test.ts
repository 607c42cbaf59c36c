import { request as httpRequest } from 'node:http';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * Security review III, finding 5: `Host: shop.example.com.` (a trailing dot) served the dashboard and the
 * API on a verified custom domain, which review II had closed for `Host: shop.example.com`. The Host is now
 * normalised in one place (trailing dot, port, case, IPv6 brackets) for the custom-domain guard, the
 * health shortcut and the yield site route. Real API, workers, Temporal, chain and a DNS server.
 */

const BASE = '/v1/merchants/me/yield-deployments';
let world: YieldWorld;
let merchant: SignedInMerchant;
let deploymentId: string;
let hostname: string;

const call = (method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

beforeAll(async () => {
  world = await startYieldWorld();
  merchant = await signInNewMerchant(world.app);
  const draft = await call('POST', '', { name: 'Dot Savings', chainId: YIELD_CHAIN });
  expect(draft.status).toBe(201);
  deploymentId = draft.body.id;
  expect((await call('POST', `/${deploymentId}/deploy`)).status).toBe(202);
  const deployed = await waitFor(
    async () => (await call('GET', `/${deploymentId}`)).body,
    (body) => body.status !== 'deploying',
    120_000,
  );
  expect(deployed).toMatchObject({ status: 'active' });
  hostname = `dot-${deploymentId.slice(0, 8)}.brand.example`;
  const attached = await call('POST', `/${deploymentId}/domains`, { hostname });
  expect(attached.status).toBe(201);
  world.txtRecords.set(attached.body.verification.name, [attached.body.verification.value]);
  await waitFor(
    async () => (await call('GET', `/${deploymentId}`)).body.domains[0].status,
    (status) => status === 'verified',
    60_000,
  );
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

/** A request with the headers given, Host included (fetch may not set Host). */
function requestWith(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const url = new URL(world.app.baseUrl);
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ hostname: url.hostname, port: url.port, path, headers }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

describe('custom-domain guard whatever the Host spelling', () => {
  it('a verified custom domain serves only its site whatever the Host spelling (security review III, finding 5)', async () => {
    const apiHost = new URL(world.app.baseUrl).host;
    const spellings: Record<string, string>[] = [
      { host: `${hostname}.` },
      { host: `${hostname.toUpperCase()}.` },
      { host: `${hostname}.:443` },
      { host: `${hostname}:8443` },
      { host: `${hostname}..` },
      // Behind the trusted proxy (TRUST_PROXY=1) the forwarded host is the request's host.
      { host: apiHost, 'x-forwarded-host': `${hostname}.` },
    ];
    for (const headers of spellings) {
      for (const [path, extra] of [
        ['/dashboard', {}],
        ['/v1/merchants/me', merchant.auth],
        ['/openapi.json', {}],
        ['/health', {}],
        [`/pay/${deploymentId}`, {}],
        [`/sites/${deploymentId}`, {}],
      ] as const) {
        const answered = await requestWith(path, { ...extra, ...headers });
        expect([headers, path, answered.status]).toEqual([headers, path, 404]);
        expect(answered.body).toContain('Nothing here');
        expect(answered.body).not.toContain(merchant.merchantId);
      }
      // The site itself answers on every spelling of its host.
      const site = await requestWith('/', headers);
      expect([headers, site.status]).toEqual([headers, 200]);
      expect(site.body).toContain('Dot Savings');
    }
    // The API's own host is not a custom domain, with or without the dot.
    expect((await requestWith('/openapi.json', { host: apiHost })).status).toBe(200);
  });
});
