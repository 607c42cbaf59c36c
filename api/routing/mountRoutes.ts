import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { AnyRoute, AuthKind, PerIpAllowance } from './route';
import { parseBody, parseParams, parseQuery } from './validation';

export type Authenticators = Partial<Record<Exclude<AuthKind, 'none'>, Middleware>>;
/** The per-client-IP limits (api/rateLimits.ts), by the allowance routes declare in `perIpLimit`. */
export type PerIpLimits = Record<PerIpAllowance, Middleware>;

export interface MountedRoutes {
  router: Router;
  /**
   * Answers a request whose method and path are exactly those of a route without parameters (`GET
   * /health`) with that route's steps, composed once, without the router's per-request scan of every
   * route pattern. Only for routes the router itself would pick first; anything else (a HEAD, a trailing
   * slash, another case, a path with parameters) goes on to the router. Mount it just before it.
   */
  staticRoutes: Middleware;
}

/**
 * Builds one Koa router from route definitions: take the route's per-IP allowance, authenticate,
 * validate, run, answer. The allowance is a step of the matched route, not a pattern over the raw path,
 * so whatever spelling the router answers for a route (trailing slash, another case, HEAD for GET)
 * spends it (security review III, finding 1).
 */
export function mountRoutes(
  routes: AnyRoute[],
  authenticators: Authenticators,
  perIpLimits: PerIpLimits,
): MountedRoutes {
  const router = new Router();
  const stepsOf = new Map<AnyRoute, Middleware[]>();
  for (const route of routes) {
    const steps: Middleware[] = [];
    if (route.perIpLimit) steps.push(perIpLimits[route.perIpLimit]);
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
    stepsOf.set(route, steps);
  }

  const shortcuts = new Map<string, { path: string; run: Middleware }>();
  for (const route of routes) {
    if (route.path.includes(':') || route.path.includes('(') || route.path.includes('*')) continue;
    const method = route.method.toUpperCase();
    // The router runs the first route whose pattern matches: only when that is this one is it a shortcut.
    const first = router.match(route.path, method).pathAndMethod[0];
    if (!first || first.path !== route.path || shortcuts.has(`${method} ${route.path}`)) continue;
    shortcuts.set(`${method} ${route.path}`, { path: route.path, run: compose(stepsOf.get(route)!) });
  }
  const staticRoutes: Middleware = (ctx, next) => {
    const shortcut = shortcuts.get(`${ctx.method} ${ctx.path}`);
    if (!shortcut) return next();
    // What the router sets on the context for a matched route without parameters.
    const params: Record<string, string> = {};
    (ctx.request as unknown as { params: Record<string, string> }).params = params;
    ctx.params = params;
    ctx.captures = [];
    ctx.routerPath = shortcut.path;
    ctx._matchedRoute = shortcut.path;
    return shortcut.run(ctx, next);
  };
  return { router, staticRoutes };
}

/**
 * The route's steps as one middleware, each step's `next` the following step and the last one's `next`.
 * Routes have one step (the handler) or two (authenticate, then the handler): both without a closure per
 * request beyond the one `next` the authenticator is handed.
 */
function compose(steps: Middleware[]): Middleware {
  if (steps.length === 1) return steps[0]!;
  if (steps.length === 2) {
    const [first, second] = steps as [Middleware, Middleware];
    return (ctx, next) => first(ctx, () => second(ctx, next));
  }
  return (ctx, next) => {
    const run = (index: number): Promise<unknown> =>
      index === steps.length
        ? Promise.resolve(next())
        : Promise.resolve(steps[index]!(ctx, () => run(index + 1)));
    return run(0);
  };
}
