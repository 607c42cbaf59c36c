import { request as httpRequest } from 'node:http';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';

/**
 * Regressions of what schemathesis found against `/openapi.json` (contractFuzz.test.ts): a method the
 * router implements nowhere (TRACE) answered 500, and operations answered 400/404 statuses their
 * documents did not declare.
 */
describe('schemathesis findings stay fixed', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let document: any;
  beforeAll(async () => {
    app = await startTestApp();
    merchant = await signInNewMerchant(app);
    document = (await app.request('/openapi.json')).body;
  });
  afterAll(() => app.close());

  /** node:http, since fetch refuses TRACE. */
  function rawRequest(method: string, path: string, headers: Record<string, string>) {
    return new Promise<{ status: number; allow?: string; body: unknown }>((resolve, reject) => {
      const sent = httpRequest(`${app.baseUrl}${path}`, { method, headers }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode!, allow: response.headers.allow, body: JSON.parse(text) }),
        );
      });
      sent.once('error', reject);
      sent.end();
    });
  }

  it.each([
    ['TRACE', '/health', 'HEAD, GET'],
    ['TRACE', '/v1/paymaster/limits', 'HEAD, GET, PATCH'],
    ['DELETE', '/health', 'HEAD, GET'],
    ['PUT', '/v1/sessions', 'POST'],
  ])(
    '%s %s answers 405 with the error body and the allowed methods, not 500',
    async (method, path, allow) => {
      const response = await rawRequest(method, path, merchant.auth);
      expect(response.status).toBe(405);
      expect(response.allow).toBe(allow);
      expect(response.body).toEqual({
        statusCode: 405,
        error: 'Method Not Allowed',
        message: `Method ${method} is not allowed on ${path}`,
      });
    },
  );

  it('an unknown path still answers 404 for any method', async () => {
    const response = await rawRequest('TRACE', '/v1/nothing-here', {});
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ statusCode: 404, message: 'Cannot TRACE /v1/nothing-here' });
  });

  it.each([
    ['get', '/v1/merchants/me/balance/charges?cursor=', '/v1/merchants/me/balance/charges', 'cursor'],
    ['get', '/v1/merchants/me/balance/charges.csv?from=&to=', '/v1/merchants/me/balance/charges.csv', 'from'],
    ['get', '/v1/merchants/me/balance/statement.pdf', '/v1/merchants/me/balance/statement.pdf', 'month'],
    [
      'get',
      '/v1/merchants/me/paymaster/overview/recent-ops?limit=24961',
      '/v1/merchants/me/paymaster/overview/recent-ops',
      'limit',
    ],
    ['post', '/v1/paymaster/allowlist', '/v1/paymaster/allowlist', 'chainId'],
    ['post', '/v1/paymaster/clients', '/v1/paymaster/clients', 'label'],
  ])('%s %s answers a 400 its operation documents', async (method, url, path, field) => {
    const response = await app.request(url, {
      method: method.toUpperCase(),
      headers: merchant.auth,
      ...(method === 'post' && { json: {} }),
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain(field);
    expect(document.paths[path][method].responses['400']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    });
  });

  it('login-payload with a chain id beyond the stored integer answers 400, not 500 (seed 1371011874)', async () => {
    const address = '0x2000000000000000000000000000000000000002';
    const tooLarge = await app.request(`/v1/auth/login-payload?chainId=3502813484816352&address=${address}`);
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.message).toBe('Validation failed: chainId: must be at most 2147483647');
    const largest = await app.request(`/v1/auth/login-payload?chainId=2147483647&address=${address}`);
    expect(largest.status).toBe(200);
    expect(largest.body.chainId).toBe(2147483647);
  });

  it('malformed JSON answers 400, documented on every operation with a body', async () => {
    const response = await app.request('/v1/merchants/me/api-keys', {
      method: 'POST',
      headers: { ...merchant.auth, 'content-type': 'application/json' },
      body: '\x19',
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('Malformed JSON in request body');
    const undocumented = Object.entries(document.paths).flatMap(([path, operations]) =>
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      Object.entries(operations as Record<string, any>)
        .filter(
          ([, operation]) => (operation.requestBody || operation.parameters) && !operation.responses['400'],
        )
        .filter(
          ([, operation]) =>
            // Path-only parameters answer 404, not 400 (an id that cannot exist is simply not found).
            operation.requestBody ||
            operation.parameters.some((parameter: { in: string }) => parameter.in === 'query'),
        )
        .map(([method]) => `${method} ${path}`),
    );
    expect(undocumented).toEqual([]);
  });

  it('every operation with a path parameter documents 404', async () => {
    const missing = Object.entries(document.paths)
      .filter(([path]) => path.includes('{'))
      .flatMap(([path, operations]) =>
        Object.entries(operations as Record<string, { responses: Record<string, unknown> }>)
          .filter(([, operation]) => !operation.responses['404'])
          .map(([method]) => `${method} ${path}`),
      );
    expect(missing).toEqual([]);
  });
});
