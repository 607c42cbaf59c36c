import { z } from 'zod';
import type { AnyRoute, AuthKind } from '../routing/route';
import { OPERATIONS, TAG_DESCRIPTIONS } from './operations';
import { addSharedOutcomes, idempotencyKeyParameter } from './sharedOutcomes';
import { webhooksSection } from './webhookEvents';

/**
 * OpenAPI 3.1 documents generated from the route definitions and the same zod schemas that
 * validate requests, so the published contract cannot drift from what the server enforces.
 */
type JsonSchema = Record<string, unknown>;

const securitySchemes = {
  merchantJwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Merchant session token from /v1/auth/verify',
  },
  secretApiKey: { type: 'http', scheme: 'bearer', description: 'Secret API key `sk_live_...`' },
  paymasterClientId: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Client-Id',
    description: 'Publishable `pmc_live_*` / `pmc_test_*` id',
  },
} as const;

const securityFor: Record<AuthKind, Record<string, string[]>[]> = {
  none: [],
  jwt: [{ merchantJwt: [] }],
  sk: [{ secretApiKey: [] }],
  client: [{ paymasterClientId: [] }],
};

/** Only the schemes the document's routes use: the integrator contract does not advertise the merchant JWT. */
function usedSecuritySchemes(routes: AnyRoute[]): Partial<typeof securitySchemes> {
  const used = new Set(
    routes.flatMap((route) => securityFor[route.auth].flatMap((requirement) => Object.keys(requirement))),
  );
  return Object.fromEntries(Object.entries(securitySchemes).filter(([name]) => used.has(name)));
}

const errorBodySchema: JsonSchema = {
  type: 'object',
  required: ['statusCode', 'message'],
  properties: {
    statusCode: { type: 'integer' },
    message: { type: 'string' },
    error: { type: 'string' },
    code: { type: 'string' },
    errors: {
      type: 'array',
      description:
        'On every 400: each refused request field (dotted path, `""` for the request as a whole) and its problem; ' +
        'empty when the problem is not one field’s.',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/**
 * What a reader of the document needs beyond the routes themselves (it stands alone: no link outside
 * it): conventions, credentials, session states, the error format and rate limits.
 */
export const CONTRACT_OVERVIEW = [
  'Stablecoin payment sessions, signed webhooks, merchant account and a managed ERC-4337 paymaster.',
  '',
  '**Conventions.** JSON bodies; amounts are decimal strings (USD, at most 6 fractional digits); token amounts are ' +
    'base-unit integer strings; timestamps ISO 8601 UTC. Page lists `{data, page, limit, total}`, cursor lists ' +
    '`{data, nextCursor}`. Bodies above 1 MiB answer 413.',
  '',
  '**Credentials.** Merchant token: `Authorization: Bearer <JWT>` from `POST /v1/auth/verify` (dashboard and ' +
    'paymaster management). Secret API key: `Authorization: Bearer sk_...` (session creation, webhooks). ' +
    'Paymaster client id: `X-Client-Id: pmc_live_...|pmc_test_...` (paymaster RPC and bundler proxy). A missing, ' +
    'malformed, expired or unknown credential answers 401; another merchant’s resource answers 404.',
  '',
  '**Session states.** `awaiting_payment` → `confirming` (deposit seen; webhook `session.confirming`) → ' +
    '`bridging` (layer-2 payments) → `completed`; `confirming` → `failed` when settlement reverts; ' +
    '`awaiting_payment` → `expired` once `expiresAt` passes (computed on read). `pending` is transient.',
  '',
  '**Errors.** Every error except the paymaster RPC’s is `{statusCode, message, error?}` (schema ErrorBody). ' +
    'A 400 also lists `errors: [{field, message}]`, the refused fields (`message` reads ' +
    '`Validation failed: field: problem; ...` for them). ' +
    'The paymaster RPC answers JSON-RPC errors with HTTP 200; a message starting `Policy denied: ` is a policy ' +
    'decision. 429 (rate limits) and 503 (a dependency unavailable) carry `Retry-After` in seconds.',
  '',
  '**Retries.** A 429 or 503 applied nothing: retry after `Retry-After`. Session creation honours an ' +
    '`Idempotency-Key` header, so a retry after a lost answer returns the first answer instead of a second session.',
  '',
  '**Events.** The `webhooks` section lists every event the service POSTs to the merchant’s endpoints, with ' +
    'the `X-Service-Signature` scheme (HMAC-SHA256 over `<t>.<raw body>`, one `v1` per live secret).',
].join('\n');

type ToSchema = (schema: z.ZodType, io: 'input' | 'output') => JsonSchema;

/**
 * The document's components and the converter that fills them: every zod schema becomes JSON Schema,
 * its `$defs` hoisted into `components.schemas`.
 */
function createComponentRegistry(): { components: Record<string, JsonSchema>; toSchema: ToSchema } {
  const components: Record<string, JsonSchema> = { ErrorBody: errorBodySchema };

  const toSchema: ToSchema = (schema, io) => {
    const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
    const {
      $schema: _ignored,
      $defs,
      ...rest
    } = generated as { $schema?: string; $defs?: Record<string, JsonSchema> };
    const definitions = Object.entries($defs ?? {});
    const names = new Map(definitions.map(([name]) => [name, name]));
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (value && typeof value === 'object') {
        return Object.fromEntries(
          Object.entries(value).map(([k, v]) =>
            k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')
              ? [k, `#/components/schemas/${names.get(v.slice(8)) ?? v.slice(8)}`]
              : [k, rewrite(v)],
          ),
        );
      }
      return value;
    };
    // A definition shares the component of its name only when identical once its refs point at
    // components (comparing before that rewrite duplicated every schema holding a ref, e.g. SessionCreate);
    // otherwise it takes a free `<name>Input`/`<name>Output[n]`. A rename changes the definitions that
    // refer to it, so repeat until stable; each definition is renamed at most once, so this ends.
    const suffix = io === 'input' ? 'Input' : 'Output';
    const claimedBy = (key: string) => definitions.find(([name]) => names.get(name) === key)?.[0];
    const fits = (name: string, definition: JsonSchema) => {
      const key = names.get(name)!;
      const existing = components[key];
      return existing
        ? JSON.stringify(existing) === JSON.stringify(rewrite(definition))
        : claimedBy(key) === name;
    };
    for (let changed = true; changed;) {
      changed = false;
      for (const [name, definition] of definitions) {
        if (fits(name, definition)) continue;
        let key = `${name}${suffix}`;
        for (let n = 2; components[key] || claimedBy(key); n++) key = `${name}${suffix}${n}`;
        names.set(name, key);
        changed = true;
      }
    }
    for (const [name, definition] of definitions)
      components[names.get(name)!] = rewrite(definition) as JsonSchema;
    return rewrite(rest) as JsonSchema;
  };
  return { components, toSchema };
}

function parametersFrom(toSchema: ToSchema, schema: z.ZodType | undefined, location: 'query' | 'path') {
  if (!schema) return [];
  const json = toSchema(schema, 'input') as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    schema: property,
  }));
}

/** Path parameters in the path's order (declared ones with their schema), then the query's. */
function routeParameters(route: AnyRoute, toSchema: ToSchema): Record<string, unknown>[] {
  const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
  const declaredParams = parametersFrom(toSchema, route.params, 'path');
  return [
    ...pathParams.map(
      (name) =>
        declaredParams.find((param) => param.name === name) ?? {
          name,
          in: 'path',
          required: true,
          schema: { type: 'string' },
        },
    ),
    ...parametersFrom(toSchema, route.query, 'query'),
  ];
}

function routeResponses(route: AnyRoute, toSchema: ToSchema): Record<string, unknown> {
  const responses = Object.fromEntries(
    Object.entries(route.responses).map(([status, response]) => {
      const contentType = response.contentType ?? 'application/json';
      const schema = response.schema
        ? toSchema(response.schema, 'output')
        : Number(status) >= 400
          ? { $ref: '#/components/schemas/ErrorBody' }
          : response.contentType
            ? fileSchema(response.contentType)
            : undefined;
      return [
        status,
        { description: response.description, ...(schema && { content: { [contentType]: { schema } } }) },
      ];
    }),
  );
  addSharedOutcomes(route, responses);
  return responses;
}

// A missing body is validated as `{}`, so an object body whose fields are all optional may be omitted.
function requestBodyOf(
  body: z.ZodType,
  { components, toSchema }: ReturnType<typeof createComponentRegistry>,
) {
  const schema = toSchema(body, 'input');
  const ref = typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : undefined;
  const mayBeOmitted = (ref ? components[ref] : schema)?.type === 'object' && body.safeParse({}).success;
  return { required: !mayBeOmitted, content: { 'application/json': { schema } } };
}

function operationOf(
  route: AnyRoute,
  path: string,
  registry: ReturnType<typeof createComponentRegistry>,
): Record<string, unknown> {
  // Order of the conversions matters: it decides which definition keeps a shared component name.
  const parameters = routeParameters(route, registry.toSchema);
  const responses = routeResponses(route, registry.toSchema);
  const naming = OPERATIONS[`${route.method.toUpperCase()} ${path}`];
  if (route.idempotencyKey) parameters.push(idempotencyKeyParameter);
  return {
    // A route missing from OPERATIONS keeps a mechanical id (openapi.test.ts fails until it has one).
    operationId:
      naming?.operationId ??
      `${route.method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, next: string | undefined) => (next ? next.toUpperCase() : ''))}`,
    summary: route.summary,
    description: naming?.description ?? route.summary,
    tags: [route.tag],
    security: securityFor[route.auth],
    ...(parameters.length && { parameters }),
    ...(route.body && { requestBody: requestBodyOf(route.body, registry) }),
    responses,
  };
}

export function buildOpenApiDocument({
  routes,
  title,
  serverUrl,
  version,
}: {
  routes: AnyRoute[];
  title: string;
  serverUrl: string;
  version: string;
}): JsonSchema {
  const registry = createComponentRegistry();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method] = operationOf(route, path, registry);
  }

  const webhooks = webhooksSection((name, schema) => {
    registry.components[name] = registry.toSchema(schema, 'output');
    return { $ref: `#/components/schemas/${name}` };
  });
  const usedTags = new Set([...routes.map((route) => route.tag), 'Events']);
  return {
    openapi: '3.1.0',
    info: {
      title,
      version,
      description: CONTRACT_OVERVIEW,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl }],
    tags: Object.entries(TAG_DESCRIPTIONS)
      .filter(([name]) => usedTags.has(name))
      .map(([name, description]) => ({ name, description })),
    paths,
    webhooks,
    components: { schemas: registry.components, securitySchemes: usedSecuritySchemes(routes) },
  };
}

/** A file answer (CSV, PDF) with no schema of its own: text for text types, bytes otherwise. */
function fileSchema(contentType: string): { type: 'string'; format?: 'binary' } {
  return contentType.startsWith('text/') ? { type: 'string' } : { type: 'string', format: 'binary' };
}
