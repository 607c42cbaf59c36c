import { request as httpRequest } from 'node:http';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * Security review II, finding 1: a custom domain is held only by a verified row. A pending or failed
 * row blocks nobody, a newer TXT proof wins, pending rows per merchant are capped, a verified domain
 * whose record lapses is released after a grace period, and a verified custom host serves the yield
 * site only. Real API, workers, Temporal and a DNS server on a loopback port; short re-check intervals.
 */

const BASE = '/v1/merchants/me/yield-deployments';
let world: YieldWorld;
let alice: SignedInMerchant;
let bob: SignedInMerchant;

beforeAll(async () => {
  world = await startYieldWorld({
    env: { YIELD_DOMAIN_RECHECK_MS: '300', YIELD_DOMAIN_LAPSE_GRACE_MS: '2000' },
  });
  alice = await signInNewMerchant(world.app);
  bob = await signInNewMerchant(world.app);
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

const call = (merchant: SignedInMerchant, method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

async function createDraft(merchant: SignedInMerchant) {
  const created = await call(merchant, 'POST', '', { name: 'Brand Savings', chainId: YIELD_CHAIN });
  expect(created.status).toBe(201);
  return created.body as { id: string };
}

const domainsOf = async (merchant: SignedInMerchant, deploymentId: string) =>
  (await call(merchant, 'GET', `/${deploymentId}`)).body.domains as {
    id: string;
    hostname: string;
    status: string;
    verification: { name: string; value: string };
  }[];

const domainStatus = async (merchant: SignedInMerchant, deploymentId: string, domainId: string) =>
  (await domainsOf(merchant, deploymentId)).find((domain) => domain.id === domainId)?.status;

/** A request with a chosen Host header (fetch may not set Host). */
function requestWithHost(
  method: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(world.app.baseUrl);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      { method, hostname: url.hostname, port: url.port, path, headers: { ...headers, host } },
      (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      },
    );
    sent.on('error', reject);
    sent.end();
  });
}

let hostCounter = 0;
const freshHost = () => `shop-${Date.now().toString(36)}-${++hostCounter}.brand.example`;

describe('custom domains cannot be squatted (security review II, finding 1)', () => {
  it('finding 1 — a pending or failed domain holds no hostname: another merchant attaches it, and a newer TXT proof takes it', async () => {
    const hostname = freshHost();
    const squatterDraft = await createDraft(alice);
    const squatted = await call(alice, 'POST', `/${squatterDraft.id}/domains`, { hostname });
    expect(squatted.status).toBe(201);

    // The brand's real owner is not refused by the squatter's pending row.
    const ownerDraft = await createDraft(bob);
    const claimed = await call(bob, 'POST', `/${ownerDraft.id}/domains`, { hostname });
    expect(claimed.status).toBe(201);
    expect(claimed.body).toMatchObject({ hostname, status: 'pending', verifiedAt: null });

    world.txtRecords.set(claimed.body.verification.name, [claimed.body.verification.value]);
    await waitFor(
      () => domainStatus(bob, ownerDraft.id, claimed.body.id),
      (status) => status === 'verified',
      60_000,
    );
    // The squatter's row lost the hostname for good.
    await waitFor(
      () => domainStatus(alice, squatterDraft.id, squatted.body.id),
      (status) => status === 'failed',
      10_000,
    );
    // A verified hostname is held: nobody else can attach it now.
    const refused = await call(alice, 'POST', `/${squatterDraft.id}/domains`, { hostname });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/already verified/);
  });

  it('finding 1 — pending domains per merchant are capped at 5, concurrent attaches included', async () => {
    const merchant = await signInNewMerchant(world.app);
    const draft = await createDraft(merchant);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        call(merchant, 'POST', `/${draft.id}/domains`, { hostname: freshHost() }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(refused.map((answer) => answer.status)).toEqual([409, 409, 409]);
    expect(refused[0]!.body.message).toMatch(/at most 5 pending domains/);
    expect(await domainsOf(merchant, draft.id)).toHaveLength(5);
  });

  it('finding 1 — a verified domain whose TXT record lapses is released after the grace period, and the next owner proves it', async () => {
    const hostname = freshHost();
    const formerDraft = await createDraft(alice);
    const former = (await call(alice, 'POST', `/${formerDraft.id}/domains`, { hostname })).body;
    world.txtRecords.set(former.verification.name, [former.verification.value]);
    await waitFor(
      () => domainStatus(alice, formerDraft.id, former.id),
      (status) => status === 'verified',
      60_000,
    );
    // A lapse shorter than the grace period changes nothing.
    world.txtRecords.delete(former.verification.name);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    world.txtRecords.set(former.verification.name, [former.verification.value]);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await domainStatus(alice, formerDraft.id, former.id)).toBe('verified');

    // The record gone for longer than the grace period: released.
    world.txtRecords.delete(former.verification.name);
    await waitFor(
      () => domainStatus(alice, formerDraft.id, former.id),
      (status) => status === 'failed',
      30_000,
    );
    const nextDraft = await createDraft(bob);
    const next = (await call(bob, 'POST', `/${nextDraft.id}/domains`, { hostname })).body;
    world.txtRecords.set(next.verification.name, [next.verification.value]);
    await waitFor(
      () => domainStatus(bob, nextDraft.id, next.id),
      (status) => status === 'verified',
      60_000,
    );
  });

  it('finding 1 — on a verified custom host only the yield site is served, not the API, the dashboard or the checkout', async () => {
    const hostname = freshHost();
    const draft = await createDraft(alice);
    const attached = (await call(alice, 'POST', `/${draft.id}/domains`, { hostname })).body;
    world.txtRecords.set(attached.verification.name, [attached.verification.value]);
    await waitFor(
      () => domainStatus(alice, draft.id, attached.id),
      (status) => status === 'verified',
      60_000,
    );
    for (const [method, path, headers] of [
      ['GET', '/v1/merchants/me', alice.auth],
      ['GET', '/openapi.json', {}],
      ['GET', '/dashboard', {}],
      ['GET', `/pay/${draft.id}`, {}],
      ['GET', `/sites/${draft.id}`, {}],
      ['POST', '/v1/auth/email/start', {}],
      ['GET', '/health', {}],
    ] as const) {
      const answered = await requestWithHost(method, path, hostname, headers);
      expect([method, path, answered.status]).toEqual([method, path, 404]);
      expect(answered.body).not.toContain(alice.merchantId);
    }
    // The site route itself still answers on the host (404 here: a draft has no site yet), and the API
    // still answers on its own host.
    const site = await requestWithHost('GET', '/', hostname);
    expect(site.status).toBe(404);
    expect(site.body).toMatch(/<html/i);
    expect((await world.app.request('/v1/merchants/me', { headers: alice.auth })).status).toBe(200);
  });
});
