import { z } from 'zod';
import type { AnyRoute, AuthKind } from '../routing/route';

/**
 * OpenAPI 3.1 documents generated from the route definitions and the same zod schemas that
 * validate requests, so the published contract cannot drift from what the server enforces.
 */
type JsonSchema = Record<string, unknown>;

const securitySchemes = {
  merchantJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Merchant session token from /v1/auth/verify' },
  secretApiKey: { type: 'http', scheme: 'bearer', description: 'Secret API key `sk_live_...`' },
  paymasterClientId: { type: 'apiKey', in: 'header', name: 'X-Client-Id', description: 'Publishable `pmc_live_*` / `pmc_test_*` id' },
} as const;

const securityFor: Record<AuthKind, Record<string, string[]>[]> = {
  none: [],
  jwt: [{ merchantJwt: [] }],
  sk: [{ secretApiKey: [] }],
  client: [{ paymasterClientId: [] }],
};

const errorBodySchema: JsonSchema = {
  type: 'object',
  required: ['statusCode', 'message'],
  properties: { statusCode: { type: 'integer' }, message: { type: 'string' }, error: { type: 'string' } },
};

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
  const components: Record<string, JsonSchema> = { ErrorBody: errorBodySchema };

  const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
    const { $schema: _ignored, $defs, ...rest } = generated as { $schema?: string; $defs?: Record<string, JsonSchema> };
    const renames = new Map<string, string>();
    for (const [name, definition] of Object.entries($defs ?? {})) {
      let key = name;
      if (components[key] && JSON.stringify(components[key]) !== JSON.stringify(definition)) key = `${name}${io === 'input' ? 'Input' : 'Output'}`;
      renames.set(name, key);
      components[key] = definition;
    }
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (value && typeof value === 'object') {
        return Object.fromEntries(
          Object.entries(value).map(([k, v]) =>
            k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')
              ? [k, `#/components/schemas/${renames.get(v.slice(8)) ?? v.slice(8)}`]
              : [k, rewrite(v)],
          ),
        );
      }
      return value;
    };
    for (const key of renames.values()) components[key] = rewrite(components[key]) as JsonSchema;
    return rewrite(rest) as JsonSchema;
  };

  const parametersFrom = (schema: z.ZodType | undefined, location: 'query' | 'path') => {
    if (!schema) return [];
    const json = toSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    return Object.entries(json.properties ?? {}).map(([name, property]) => ({
      name,
      in: location,
      required: location === 'path' || (json.required ?? []).includes(name),
      schema: property,
    }));
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
    const declaredParams = parametersFrom(route.params, 'path');
    const parameters = [
      ...pathParams.map(
        (name) => declaredParams.find((param) => param.name === name) ?? { name, in: 'path', required: true, schema: { type: 'string' } },
      ),
      ...parametersFrom(route.query, 'query'),
    ];
    const responses = Object.fromEntries(
      Object.entries(route.responses).map(([status, response]) => {
        const contentType = response.contentType ?? 'application/json';
        const schema = response.schema ? toSchema(response.schema, 'output') : Number(status) >= 400 ? { $ref: '#/components/schemas/ErrorBody' } : undefined;
        return [status, { description: response.description, ...(schema && { content: { [contentType]: { schema } } }) }];
      }),
    );
    if (route.auth === 'jwt' || route.auth === 'sk') responses['401'] ??= { description: 'Missing, malformed, expired or unknown credential', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } };
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: `${route.method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, next: string | undefined) => (next ? next.toUpperCase() : ''))}`,
      summary: route.summary,
      tags: [route.tag],
      security: securityFor[route.auth],
      ...(parameters.length && { parameters }),
      ...(route.body && {
        requestBody: { required: true, content: { 'application/json': { schema: toSchema(route.body, 'input') } } },
      }),
      responses,
    };
  }

  return {
    openapi: '3.1.0',
    info: { title, version },
    servers: [{ url: serverUrl }],
    paths,
    components: { schemas: components, securitySchemes },
  };
}
