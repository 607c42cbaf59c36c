import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { z } from 'zod';
import { startTestApp, type TestApp } from '../../test/harness/app';
import type { AnyRoute, AuthKind } from '../routing/route';
import { OPERATIONS } from './operations';

/**
 * The two published contracts (SPEC Versioning, docs/service-contract.md), fetched from the running app: valid
 * OpenAPI 3.1, one operation per mounted route, the integrator document limited to the integrator
 * surface, bodies and responses carrying the zod schemas that validate requests, security per auth kind.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type ApiDocument = Parameters<typeof validate>[0];

const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const;
const openApiPath = (koaPath: string) => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const operationKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;
const routeKey = (route: AnyRoute) => operationKey(route.method, openApiPath(route.path));

function operationsOf(document: Json): Map<string, Json> {
  const operations = new Map<string, Json>();
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const method of METHODS) if (item[method]) operations.set(operationKey(method, path), item[method]);
  }
  return operations;
}

/** The component a `{ $ref: '#/components/schemas/X' }` points at (or the schema itself when inline). */
function resolveSchema(document: Json, schema: Json): Json {
  const ref = schema.$ref as string | undefined;
  if (!ref) return schema;
  const resolved = document.components.schemas[ref.replace('#/components/schemas/', '')];
  if (!resolved) throw new Error(`unresolved ${ref}`);
  return resolved;
}

/** zod's JSON Schema with its local `$defs` inlined, to compare with the dereferenced document. */
function zodSchemaInlined(schema: z.ZodType, io: 'input' | 'output'): Json {
  const {
    $schema: _ignored,
    $defs = {},
    ...root
  } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline);
    if (!value || typeof value !== 'object') return value;
    const { $ref, ...rest } = value as Json;
    const inlinedRest = Object.fromEntries(Object.entries(rest).map(([key, entry]) => [key, inline(entry)]));
    if (typeof $ref !== 'string' || !$ref.startsWith('#/$defs/'))
      return $ref === undefined ? inlinedRest : { $ref, ...inlinedRest };
    return { ...(inline($defs[$ref.slice(8)]) as Json), ...inlinedRest };
  };
  return inline(root) as Json;
}

/** Every `type` keyword below a schema names a JSON Schema type (the 3.1 meta-schema leaves schemas unchecked). */
function invalidTypeKeywords(schema: unknown, at: string): string[] {
  if (Array.isArray(schema))
    return schema.flatMap((entry, index) => invalidTypeKeywords(entry, `${at}/${index}`));
  if (!schema || typeof schema !== 'object') return [];
  const known = ['null', 'boolean', 'object', 'array', 'number', 'string', 'integer'];
  const own = (schema as Json).type;
  const types = typeof own === 'string' ? [own] : Array.isArray(own) ? own : [];
  return [
    ...types.filter((type) => !known.includes(type)).map((type) => `${at}: type ${String(type)}`),
    ...Object.entries(schema).flatMap(([key, value]) => invalidTypeKeywords(value, `${at}/${key}`)),
  ];
}

/** What each auth kind's security scheme must look like (SPEC Authentication). */
const expectedScheme: Record<Exclude<AuthKind, 'none'>, Json> = {
  jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  sk: { type: 'http', scheme: 'bearer' },
  client: { type: 'apiKey', in: 'header', name: 'X-Client-Id' },
};

/** SPEC Versioning: the integrator contract is health, payment sessions, paymaster RPC and bundler proxy. */
const INTEGRATOR_OPERATIONS = [
  'GET /health',
  'POST /v1/sessions',
  'GET /v1/sessions/export',
  'GET /v1/sessions/{id}',
  'GET /v1/sessions/{id}/status',
  'POST /v1/paymaster/rpc',
  'POST /v1/paymaster/bundler/{chainId}',
];
/** The integrator contract's own address is an integrator-audience route too, so it lists itself. */
const INTEGRATOR_CONTRACT_OPERATION = 'GET /openapi/integrator.json';

describe('OpenAPI documents', () => {
  let app: TestApp;
  let full: Json;
  let integrator: Json;

  beforeAll(async () => {
    app = await startTestApp();
    const [fullResponse, integratorResponse] = await Promise.all([
      app.request('/openapi.json'),
      app.request('/openapi/integrator.json'),
    ]);
    expect([fullResponse.status, integratorResponse.status]).toEqual([200, 200]);
    full = fullResponse.body;
    integrator = integratorResponse.body;
  });
  afterAll(() => app.close());

  describe.each([
    ['full', () => full],
    ['integrator', () => integrator],
  ])('the %s document', (_name, documentOf) => {
    it('is valid OpenAPI 3.1 for the parser', async () => {
      const document = documentOf();
      expect(document.openapi).toMatch(/^3\.1\.\d+$/);
      // validate() resolves references in place: hand it a copy.
      const result = await validate(structuredClone(document) as ApiDocument);
      expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
      expect(result.warnings).toEqual([]);
    });

    it('uses only JSON Schema types and only security schemes it defines', () => {
      const document = documentOf();
      const schemaProblems = [
        ...invalidTypeKeywords(document.components.schemas, '#/components/schemas'),
        ...invalidTypeKeywords(document.paths, '#/paths'),
      ];
      expect(schemaProblems).toEqual([]);
      const defined = Object.keys(document.components.securitySchemes);
      const used = new Set(
        [...operationsOf(document).values()].flatMap((operation) => operation.security.flatMap(Object.keys)),
      );
      expect([...used].sort()).toEqual([...defined].sort());
    });

    it('stands alone: it states the error format and the credentials, and points at nothing outside itself', () => {
      const document = documentOf();
      expect(document.info.description).toContain('{statusCode, message, error?}');
      expect(document.info.description).toContain('X-Client-Id');
      const text = JSON.stringify(document);
      expect(text).not.toMatch(/\.\.\/|shared\/|SPEC|DESIGN/);
    });
  });

  it('the full document has exactly one operation per mounted route', () => {
    const mounted = app.routes.map(routeKey);
    expect(new Set(mounted).size).toBe(mounted.length);
    expect([...operationsOf(full).keys()].sort()).toEqual([...mounted].sort());
    // A handful the SPEC names, so an empty route table cannot pass.
    expect(mounted).toEqual(
      expect.arrayContaining([
        'GET /v1/merchants/me',
        'POST /v1/webhooks',
        'GET /v1/paymaster/usage',
        ...INTEGRATOR_OPERATIONS,
      ]),
    );
  });

  it('the integrator document holds exactly the integrator routes and nothing of the dashboard', () => {
    const integratorRoutes = app.routes.filter((route) => route.audience === 'integrator').map(routeKey);
    const operations = [...operationsOf(integrator).keys()].sort();
    expect(operations).toEqual([...integratorRoutes].sort());
    expect(operations).toEqual([...INTEGRATOR_OPERATIONS, INTEGRATOR_CONTRACT_OPERATION].sort());

    const dashboardRoutes = app.routes.filter((route) => route.audience === 'dashboard').map(routeKey);
    expect(operations.filter((operation) => dashboardRoutes.includes(operation))).toEqual([]);
    expect(
      Object.keys(integrator.paths).filter(
        (path) => path.startsWith('/v1/merchants') || path.startsWith('/v1/webhooks'),
      ),
    ).toEqual([]);
    // No dashboard credential and no schema that no integrator operation reaches.
    expect(integrator.components.securitySchemes.merchantJwt).toBeUndefined();
    const reachable = new Set<string>();
    const visit = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(visit);
      if (!value || typeof value !== 'object') return;
      const ref = (value as Json).$ref;
      if (typeof ref === 'string' && !reachable.has(ref)) {
        reachable.add(ref);
        visit(resolveSchema(integrator, { $ref: ref }));
      }
      Object.values(value).forEach(visit);
    };
    visit(integrator.paths);
    visit(integrator.webhooks);
    expect(
      Object.keys(integrator.components.schemas).filter(
        (name) => !reachable.has(`#/components/schemas/${name}`),
      ),
    ).toEqual([]);
  });

  it('names every operation for people (one id each, a description, a described tag)', () => {
    const operations = [...operationsOf(full).entries()];
    const missing = app.routes.map(routeKey).filter((key) => !OPERATIONS[key]);
    expect(missing).toEqual([]);
    const ids = operations.map(([, operation]) => operation.operationId as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]);
    expect(operations.filter(([, operation]) => !operation.description).map(([key]) => key)).toEqual([]);
    expect(
      Object.fromEntries(operations.map(([key, operation]) => [key, operation.operationId])),
    ).toMatchObject({
      'POST /v1/sessions': 'createSession',
      'GET /v1/sessions/{id}': 'getSession',
      'GET /v1/merchants/me/sessions': 'listSessions',
      'GET /v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
    });
    const described = new Map<string, string>(full.tags.map((tag: Json) => [tag.name, tag.description]));
    const used = new Set(operations.map(([, operation]) => operation.tags[0] as string));
    expect([...used].filter((tag) => !described.get(tag))).toEqual([]);
  });

  it('declares Idempotency-Key where the api honours it, and every status the middleware chain can answer', async () => {
    const operations = operationsOf(full);
    const headerOf = (key: string) =>
      (operations.get(key)!.parameters ?? []).find((parameter: Json) => parameter.name === 'Idempotency-Key');
    expect(headerOf('POST /v1/sessions')).toMatchObject({ in: 'header', required: false });
    expect(headerOf('POST /v1/merchants/me/sessions')).toMatchObject({ in: 'header' });
    expect(headerOf('POST /v1/webhooks')).toBeUndefined();
    const statuses = (key: string) => Object.keys(operations.get(key)!.responses).sort();
    expect(statuses('POST /v1/sessions')).toEqual(['201', '400', '401', '409', '413', '503']);
    expect(statuses('GET /v1/sessions/{id}')).toEqual(['200', '404', '429', '503']);
    expect(statuses('POST /v1/auth/verify')).toEqual(expect.arrayContaining(['413', '429', '503']));
    expect(statuses('GET /health')).toEqual(['200']);
    expect(statuses('POST /v1/paymaster/bundler/{chainId}')).toEqual(
      expect.arrayContaining(['401', '403', '413', '429', '503']),
    );
    // What the document promises, the app answers: a body over the limit is refused before any credential check.
    const oversized = await app.request('/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '1', merchantName: 'x'.repeat(app.config.BODY_LIMIT_BYTES) }),
    });
    expect(oversized.status).toBe(413);
    expect(oversized.body).toMatchObject({ statusCode: 413, message: expect.any(String) });
    const limited = operations.get('GET /v1/sessions/{id}')!.responses['429'];
    expect(limited.headers['Retry-After'].schema.type).toBe('integer');
    expect(limited.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
  });

  it.each([
    ['full', () => full],
    ['integrator', () => integrator],
  ])('the %s document has one webhook per event type, with the signature headers', (_name, documentOf) => {
    const document = documentOf();
    expect(Object.keys(document.webhooks).sort()).toEqual(
      [
        'endpoint.disabled',
        'endpoint.test',
        'refund.failed',
        'refund.succeeded',
        'session.completed',
        'session.confirming',
        'session.expired',
        'session.failed',
        'session.overpaid',
        'session.paid_late',
        'session.underpaid',
        'subscription.created',
        'subscription.renewed',
        'subscription.payment_failed',
        'subscription.canceled',
      ].sort(),
    );
    const confirming = document.webhooks['session.confirming'].post;
    expect(confirming.parameters.map((parameter: Json) => parameter.name)).toEqual([
      'X-Service-Signature',
      'X-Service-Event-Id',
    ]);
    const body = resolveSchema(document, confirming.requestBody.content['application/json'].schema);
    expect(body.properties.type).toEqual({ type: 'string', const: 'session.confirming' });
    const completed = resolveSchema(
      document,
      document.webhooks['session.completed'].post.requestBody.content['application/json'].schema,
    );
    expect(completed.properties.data.required).toEqual(['session', 'settlement']);
    expect(completed.properties.data.properties.settlement.properties.asset).toEqual({
      type: 'string',
      const: 'sUSDe',
    });
    // The test event goes to the endpoint it was asked for, not to those that list a type.
    const test = document.webhooks['endpoint.test'].post;
    expect(test.description).toContain('Delivered only to the endpoint it was asked for');
    expect(
      resolveSchema(document, test.requestBody.content['application/json'].schema).properties.type,
    ).toEqual({
      type: 'string',
      const: 'endpoint.test',
    });
  });

  it('the session create body is the zod schema: amount required, sandboxMode boolean, no unknown fields', () => {
    const skCreate = operationsOf(full).get('POST /v1/sessions')!;
    const dashboardCreate = operationsOf(full).get('POST /v1/merchants/me/sessions')!;
    const bodySchema = skCreate.requestBody.content['application/json'].schema;
    expect(skCreate.requestBody.required).toBe(true);
    // Both create routes validate with the same schema, so they share one component.
    expect(dashboardCreate.requestBody.content['application/json'].schema).toEqual(bodySchema);
    const body = resolveSchema(full, bodySchema);
    expect(body.type).toBe('object');
    expect(body.required).toEqual(['amount']);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.amount).toMatchObject({ type: 'string', pattern: expect.any(String) });
    expect(body.properties.sandboxMode).toEqual({ type: 'boolean' });
    expect(body.properties.expiresInSec).toMatchObject({ type: 'integer', minimum: 60, maximum: 604800 });
    expect(body.properties.paymentOptionSymbols.items.enum).toEqual(['USDC', 'USDT', 'USDe']);
    expect(body.properties.overpayment.enum).toEqual(['settle', 'hold']);
    expect(resolveSchema(full, body.properties.lineItems.items).required).toEqual([
      'name',
      'quantity',
      'unitPrice',
      'total',
    ]);
    expect(Object.keys(body.properties).sort()).toEqual(
      [
        'amount',
        'expiresInSec',
        'lineItems',
        'merchantName',
        'overpayment',
        'paymentOptionSymbols',
        'refundAddress',
        'sandboxMode',
        'successUrl',
      ].sort(),
    );
    expect(
      resolveSchema(
        integrator,
        operationsOf(integrator).get('POST /v1/sessions')!.requestBody.content['application/json'].schema,
      ),
    ).toEqual(body);
  });

  it('every request body and response schema is the route’s zod schema', async () => {
    const dereferenced = (await dereference(structuredClone(full) as ApiDocument)) as Json;
    const operations = operationsOf(dereferenced);
    const mismatches: string[] = [];
    for (const route of app.routes) {
      const operation = operations.get(routeKey(route))!;
      if (route.body) {
        const documented = operation.requestBody?.content['application/json'].schema;
        if (JSON.stringify(documented) !== JSON.stringify(zodSchemaInlined(route.body, 'input')))
          mismatches.push(`${routeKey(route)} request body`);
        // A missing body is read as `{}`: the body may be omitted exactly when `{}` is valid for an object schema.
        const omittable = documented?.type === 'object' && route.body.safeParse({}).success;
        if (operation.requestBody.required === omittable)
          mismatches.push(`${routeKey(route)} requestBody.required`);
      } else if (operation.requestBody) {
        mismatches.push(`${routeKey(route)} documents a body it does not read`);
      }
      for (const [status, response] of Object.entries(route.responses)) {
        if (!response.schema) continue;
        const documented =
          operation.responses[status]?.content?.[response.contentType ?? 'application/json']?.schema;
        if (JSON.stringify(documented) !== JSON.stringify(zodSchemaInlined(response.schema, 'output')))
          mismatches.push(`${routeKey(route)} ${status} response`);
      }
    }
    expect(mismatches).toEqual([]);
    // An all-optional body may be omitted (SPEC: API key creation takes an optional label).
    expect(operations.get('POST /v1/merchants/me/api-keys')!.requestBody.required).toBe(false);
  });

  it('security requirements match each route’s auth kind', () => {
    const operations = operationsOf(full);
    const problems: string[] = [];
    for (const route of app.routes) {
      const operation = operations.get(routeKey(route))!;
      const label = `${routeKey(route)} (${route.auth})`;
      if (route.auth === 'none') {
        // An explicit empty list: no credential, whatever a top-level default might say.
        if (JSON.stringify(operation.security) !== '[]')
          problems.push(`${label}: security ${JSON.stringify(operation.security)}`);
        continue;
      }
      if (operation.security.length !== 1 || Object.keys(operation.security[0]).length !== 1) {
        problems.push(`${label}: expected one requirement, got ${JSON.stringify(operation.security)}`);
        continue;
      }
      const [name, scopes] = Object.entries<string[]>(operation.security[0])[0]!;
      const scheme = full.components.securitySchemes[name];
      if (scopes.length !== 0) problems.push(`${label}: scopes ${scopes.join(',')}`);
      if (!scheme || Object.entries(expectedScheme[route.auth]).some(([key, value]) => scheme[key] !== value))
        problems.push(`${label}: scheme ${name} ${JSON.stringify(scheme)}`);
      if (route.auth === 'sk' && (scheme?.bearerFormat === 'JWT' || !/sk_/.test(scheme?.description ?? '')))
        problems.push(`${label}: ${name} is not the sk_ key scheme`);
      // SPEC: every JWT or SK route answers 401 for a missing, malformed, expired or unknown credential.
      if (
        (route.auth === 'jwt' || route.auth === 'sk' || route.auth === 'client') &&
        !operation.responses['401']
      )
        problems.push(`${label}: no 401 response`);
    }
    expect(problems).toEqual([]);
    const schemeNames = (kind: AuthKind) =>
      new Set(
        app.routes
          .filter((route) => route.auth === kind)
          .map((route) => Object.keys(operations.get(routeKey(route))!.security[0] ?? {})[0]),
      );
    // One scheme per kind and no scheme shared between kinds (sk and JWT are both bearer tokens).
    expect([schemeNames('jwt').size, schemeNames('sk').size, schemeNames('client').size]).toEqual([1, 1, 1]);
    expect(new Set([...schemeNames('jwt'), ...schemeNames('sk'), ...schemeNames('client')]).size).toBe(3);
  });
});
