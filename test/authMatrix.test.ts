import { randomUUID } from 'node:crypto';
import type { AuthKind } from '../api/routing/route';
import { startTestApp, type TestApp } from './harness/app';
import { createApiKey, signInNewMerchant } from './harness/merchants';

/**
 * Walks every mounted route and presents each kind of credential: a route accepts exactly its
 * own kind (JWT, sk_ key, paymaster client id) and answers 401 to the others and to none.
 */
describe('auth matrix: every route against every credential kind', () => {
  let app: TestApp;
  let credentials: Record<Exclude<AuthKind, 'none'>, Record<string, string>>;
  beforeAll(async () => {
    app = await startTestApp();
    const merchant = await signInNewMerchant(app);
    // A real paymaster client (an unknown id is a 401 on client routes too): JWT/SK routes must still answer 401 to it.
    const paymasterClient = await app.request('/v1/paymaster/clients', {
      method: 'POST',
      headers: merchant.auth,
      json: { label: 'auth matrix', allowedChainIds: [84532] },
    });
    credentials = {
      jwt: merchant.auth,
      sk: { authorization: `Bearer ${await createApiKey(app, merchant)}` },
      client: { 'x-client-id': paymasterClient.body.client.clientId },
    };
  });
  afterAll(() => app.close());

  it('covers every route the app mounts', () => {
    expect(app.routes.length).toBeGreaterThan(5);
  });

  const kinds = ['jwt', 'sk', 'client'] as const;

  it('each protected route answers 401 without a credential and to every foreign kind, and accepts its own', async () => {
    const protectedRoutes = app.routes.filter((route) => route.auth !== 'none');
    expect(protectedRoutes.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const route of protectedRoutes) {
      const path = route.path.replace(/:[A-Za-z0-9_]+/g, () => randomUUID());
      const call = (headers: Record<string, string>) =>
        app.request(path, {
          method: route.method.toUpperCase(),
          headers,
          ...(route.method !== 'get' && { json: {} }),
        });
      const label = `${route.method.toUpperCase()} ${route.path}`;
      // Logout revokes the token it is called with: it gets a session of its own, not the shared one.
      const presented =
        route.path === '/v1/auth/logout'
          ? { ...credentials, jwt: (await signInNewMerchant(app)).auth }
          : credentials;

      const anonymous = await call({});
      if (anonymous.status !== 401) failures.push(`${label} without credential → ${anonymous.status}`);
      for (const kind of kinds) {
        const response = await call(presented[kind]);
        const accepted = response.status !== 401;
        if (kind === route.auth && !accepted)
          failures.push(`${label} rejected its own credential ${kind}: ${response.text}`);
        if (kind !== route.auth && accepted)
          failures.push(`${label} accepted a ${kind} credential → ${response.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('public routes need no credential', async () => {
    const publicPaths = app.routes.filter(
      (route) => route.auth === 'none' && route.method === 'get' && !route.path.includes(':'),
    );
    for (const route of publicPaths) {
      const response = await app.request(route.path);
      // `GET /` is a yield site for a verified domain's Host; the test app's own host has none (404 page).
      expect(route.path === '/' ? [404] : [200, 400]).toContain(response.status);
    }
  });
});
