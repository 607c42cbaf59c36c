import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp, type TestResponse } from '../harness/app';

/**
 * Security review III, finding 1: the per-IP limits matched the raw path case-sensitively, while the
 * router also answers a trailing slash, another case (and `//` for `/`), and HEAD for every GET: 40
 * login-payload requests with a trailing slash from one IP were all answered. The limit now belongs to
 * the matched route, so every spelling the router answers spends the same allowance.
 */
const ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
/** Small, so the buckets' refill (a token every 10 s) cannot reach into one route's run. */
const PER_MINUTE = 6;
/** The login default, for the review's own reproduction. */
const LOGIN_DEFAULT = 30;

interface LimitedRoute {
  method: 'GET' | 'HEAD' | 'POST';
  /** The route's path as a request spells it canonically, with a real parameter. */
  path: string;
  query?: string;
  json?: unknown;
}

const id = randomUUID();
const LOGIN_ROUTES: LimitedRoute[] = [
  { method: 'GET', path: '/v1/auth/login-payload', query: `?address=${ADDRESS}` },
  { method: 'HEAD', path: '/v1/auth/login-payload', query: `?address=${ADDRESS}` },
  { method: 'POST', path: '/v1/auth/verify', json: {} },
  { method: 'POST', path: '/v1/auth/email/start', json: {} },
  { method: 'POST', path: '/v1/auth/email/verify', json: {} },
  { method: 'POST', path: '/v1/auth/sign-in-code', json: {} },
];
const PUBLIC_READ_ROUTES: LimitedRoute[] = [
  { method: 'GET', path: `/v1/sessions/${id}` },
  { method: 'HEAD', path: `/v1/sessions/${id}` },
  { method: 'GET', path: `/v1/sessions/${id}/status` },
  { method: 'GET', path: `/pay/${id}` },
  { method: 'HEAD', path: `/pay/${id}` },
  { method: 'GET', path: '/' },
  { method: 'HEAD', path: '/' },
  { method: 'GET', path: `/sites/${id}` },
  { method: 'HEAD', path: `/sites/${id}` },
];

const mixedCase = (path: string) =>
  [...path].map((char, index) => (index % 2 ? char.toUpperCase() : char.toLowerCase())).join('');

/**
 * Every spelling the router answers for a route: as written, with a trailing slash, upper case, mixed
 * case and mixed case with a trailing slash; for `/` (which has no letters) `//`, which the router takes
 * for it too.
 */
function spellings(path: string): string[] {
  if (path === '/') return ['/', '//'];
  return [path, `${path}/`, path.toUpperCase(), mixedCase(path), `${mixedCase(path)}/`];
}

describe('per-IP limits by route, whatever the path spelling', () => {
  let app: TestApp;
  let defaults: TestApp;
  beforeAll(async () => {
    [app, defaults] = await Promise.all([
      startTestApp({
        RATE_LIMIT_LOGIN_PER_MINUTE: String(PER_MINUTE),
        RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: String(PER_MINUTE),
      }),
      startTestApp({ RATE_LIMIT_LOGIN_PER_MINUTE: String(LOGIN_DEFAULT) }),
    ]);
  });
  afterAll(() => Promise.all([app?.close(), defaults?.close()]));

  const send = (route: LimitedRoute, path: string, ip: string): Promise<TestResponse> =>
    app.request(`${path}${route.query ?? ''}`, {
      method: route.method,
      headers: { 'x-forwarded-for': ip },
      ...(route.json !== undefined && { json: route.json }),
    });

  let nextIp = 1;
  async function expectLimitHolds(route: LimitedRoute) {
    const ip = `198.51.100.${nextIp++}`;
    const forms = spellings(route.path);
    // The allowance spent in a mix of every spelling: each one is served (the router answers it).
    const refusedEarly: string[] = [];
    for (let request = 0; request < PER_MINUTE; request++) {
      const form = forms[request % forms.length]!;
      const { status } = await send(route, form, ip);
      if (status === 429 || status === 405) refusedEarly.push(`${route.method} ${form}: ${status}`);
    }
    expect(refusedEarly).toEqual([]);
    // The next request answers 429 whatever its spelling.
    for (const form of forms) {
      const refused = await send(route, form, ip);
      expect(`${route.method} ${form}: ${refused.status}`).toBe(`${route.method} ${form}: 429`);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      if (route.method !== 'HEAD')
        expect(refused.body.message).toMatch(/^Too many requests from this client; retry after \d+ s$/);
    }
  }

  it('per-IP limits hold whatever the path spelling (security review III, finding 1): 40 login-payloads with a trailing slash, 30 answered', async () => {
    const startedAt = Date.now();
    const statuses: number[] = [];
    for (let request = 0; request < 40; request++)
      statuses.push(
        (
          await defaults.request(`/v1/auth/login-payload/?address=${ADDRESS}`, {
            headers: { 'x-forwarded-for': '198.51.100.200' },
          })
        ).status,
      );
    // The bucket refills at 30 a minute while the requests run: at most that many more are answered.
    const refilled = Math.ceil(((Date.now() - startedAt) * LOGIN_DEFAULT) / 60_000);
    const answered = statuses.filter((status) => status === 200).length;
    expect(statuses.slice(0, LOGIN_DEFAULT)).toEqual(Array(LOGIN_DEFAULT).fill(200));
    expect(answered).toBeLessThanOrEqual(LOGIN_DEFAULT + refilled);
    expect(statuses.filter((status) => status !== 200)).toEqual(Array(40 - answered).fill(429));
  });

  it('per-IP limits hold whatever the path spelling (security review III, finding 1): login routes', async () => {
    for (const route of LOGIN_ROUTES) await expectLimitHolds(route);
  });

  it('per-IP limits hold whatever the path spelling (security review III, finding 1): session reads, checkout page, yield sites', async () => {
    for (const route of PUBLIC_READ_ROUTES) await expectLimitHolds(route);
  });

  it('a double slash inside a limited path is not a route: 404 from the router, nothing served', async () => {
    const response = await app.request('/v1/auth//login-payload?address=' + ADDRESS);
    expect(response.status).toBe(404);
    expect((await app.request(`//v1/sessions/${id}`)).status).toBe(404);
  });
});
