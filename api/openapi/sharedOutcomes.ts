import type { AnyRoute } from '../routing/route';

/**
 * The answers a route can give before or around its handler, read off the middleware chain of
 * api/app.ts, so each operation lists every status it can answer, not only its handler's:
 * - jsonBody: a body-carrying method answers 413 past BODY_LIMIT_BYTES and 400 for malformed JSON
 *   (except the paymaster RPC, which answers JSON-RPC -32700 with 200);
 * - limitPerClientIp: the routes with a `perIpLimit` (login, public reads) answer 429 past that allowance;
 * - the authenticators: jwt and sk answer 401; client answers 401 and 403 (origin), and its request-rate
 *   429 only on the bundler path (the route declares it; the RPC answers 200 with a JSON-RPC error);
 * - errorBody: a database or Temporal that does not answer in time is a 503 on every route that reaches
 *   one (all but those below), including through the credential checks;
 * - path parameters: an unknown or another merchant's resource is a 404.
 */
type Json = Record<string, unknown>;

/** Routes that reach no database, workflow engine or signer (they answer from the process alone). */
const DEPENDENCY_FREE = new Set([
  'GET /health',
  'GET /metrics',
  'GET /openapi.json',
  'GET /openapi/integrator.json',
]);

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const JSON_RPC_PATHS = new Set(['/v1/paymaster/rpc']);

const retryAfter = {
  'Retry-After': {
    description: 'Seconds to wait before retrying',
    schema: { type: 'integer', minimum: 1 },
  },
};

const errorOutcome = (description: string, headers?: Json) => ({
  description,
  ...(headers && { headers }),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
});

/** Adds the shared outcomes a route does not declare itself (its own wording and body win). */
export function addSharedOutcomes(route: AnyRoute, responses: Record<string, Json>): void {
  const key = `${route.method.toUpperCase()} ${route.path}`;
  const readsBody = BODY_METHODS.has(route.method) && !JSON_RPC_PATHS.has(route.path);
  if (route.body || route.query || readsBody)
    responses['400'] ??= errorOutcome('Invalid input: malformed JSON or a field that fails validation');
  if (route.auth === 'jwt' || route.auth === 'sk' || route.auth === 'client')
    responses['401'] ??= errorOutcome('Missing, malformed, expired or unknown credential');
  if (route.auth === 'client')
    responses['403'] ??= errorOutcome(
      'paymaster_origin_not_allowed: Origin missing or not in allowedOrigins',
    );
  if (/:[A-Za-z0-9_]+/.test(route.path))
    responses['404'] ??= errorOutcome('No such resource for this merchant');
  if (BODY_METHODS.has(route.method))
    responses['413'] ??= errorOutcome('Request body larger than the limit (1 MiB)');
  if (route.perIpLimit)
    responses['429'] ??= errorOutcome('Too many requests from this client IP', retryAfter);
  if (!DEPENDENCY_FREE.has(key))
    responses['503'] ??= errorOutcome(
      'A dependency (database, workflow engine) did not answer in time; nothing was applied, retry after Retry-After',
      retryAfter,
    );
  // Route-declared 429 and 503 answers carry Retry-After too.
  for (const status of ['429', '503'])
    if (responses[status] && !responses[status].headers) responses[status].headers = retryAfter;
}

/** The `Idempotency-Key` request header, on the operations whose handler honours it. */
export const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the first request with a key runs once; a repeat with the same key and body gets the ' +
    'first answer again, a repeat with another body 409. Keys are per merchant and per operation, 1 to 255 ' +
    'printable ASCII characters.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};
