import type { Config } from '../../config';
import { buildOpenApiDocument } from '../openapi/buildDocument';
import { defineRoute, type AnyRoute } from '../routing/route';

/**
 * | GET | /openapi.json            | none | full contract (adds merchant auth, dashboard, webhooks, paymaster management) |
 * | GET | /openapi/integrator.json | none | integrator contract (health, sessions, paymaster RPC and bundler proxy) |
 */
export function openApiRoutes({
  routes,
  config,
  revision,
}: {
  routes: AnyRoute[];
  config: Config;
  revision: string;
}): AnyRoute[] {
  // Built lazily once: `routes` is complete only after the app has added these routes too.
  let full: object | undefined;
  let integrator: object | undefined;
  const common = { serverUrl: config.PUBLIC_BASE_URL, version: `1.0.0+${revision}` };

  return [
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      auth: 'none',
      tag: 'Contracts',
      audience: 'dashboard',
      summary: 'The full OpenAPI 3.1 document',
      responses: { 200: { description: 'OpenAPI document' } },
      handler: () => {
        full ??= buildOpenApiDocument({ routes, title: 'Merchant API (full)', ...common });
        return { status: 200, body: full };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi/integrator.json',
      auth: 'none',
      tag: 'Contracts',
      audience: 'integrator',
      summary: 'The integrator OpenAPI 3.1 document',
      responses: { 200: { description: 'OpenAPI document' } },
      handler: () => {
        integrator ??= buildOpenApiDocument({
          routes: routes.filter((route) => route.audience === 'integrator'),
          title: 'Merchant API (integrator)',
          ...common,
        });
        return { status: 200, body: integrator };
      },
    }),
  ];
}
