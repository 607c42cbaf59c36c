import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { AnyRoute, AuthKind } from './route';
import { parseBody, parseParams, parseQuery } from './validation';

export type Authenticators = Partial<Record<Exclude<AuthKind, 'none'>, Middleware>>;

/** Builds one Koa router from route definitions: authenticate, validate, run, answer. */
export function mountRoutes(routes: AnyRoute[], authenticators: Authenticators): Router {
  const router = new Router();
  for (const route of routes) {
    const steps: Middleware[] = [];
    if (route.auth !== 'none') {
      const authenticate = authenticators[route.auth];
      if (!authenticate)
        throw new Error(`route ${route.method} ${route.path} needs a '${route.auth}' authenticator`);
      steps.push(authenticate);
    }
    steps.push(async (ctx) => {
      const params = route.params ? parseParams(route.params, ctx.params) : ctx.params;
      const query = route.query ? parseQuery(route.query, ctx.query) : ctx.query;
      const body = route.body ? parseBody(route.body, ctx.state.body) : ctx.state.body;
      const result = await route.handler({ body, query, params, merchantId: ctx.state.merchantId, ctx });
      if (!result) return;
      ctx.status = result.status;
      if (result.headers) ctx.set(result.headers);
      if (result.body !== undefined) ctx.body = result.body;
    });
    router[route.method](route.path, ...steps);
  }
  return router;
}
