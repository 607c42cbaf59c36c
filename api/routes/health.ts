import Router from '@koa/router';
import type { Registry } from 'prom-client';

/**
 * | GET | /health  | none | 200 `{ status: "ok", revision }` |
 * | GET | /metrics | none | 200 Prometheus text format      |
 */
export function healthRoutes({ revision, registry }: { revision: string; registry: Registry }): Router {
  const router = new Router();

  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok', revision };
  });

  router.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });

  return router;
}
