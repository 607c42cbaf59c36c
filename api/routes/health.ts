import type { Registry } from 'prom-client';
import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../routing/route';

/**
 * | GET | /health  | none | 200 `{ status: "ok", revision }` |
 * | GET | /metrics | none | 200 Prometheus text format      |
 */
const healthSchema = z.object({ status: z.literal('ok'), revision: z.string() }).meta({ id: 'Health' });

export function healthRoutes({ revision, registry }: { revision: string; registry: Registry }): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      auth: 'none',
      tag: 'Health',
      audience: 'integrator',
      summary: 'Liveness and the running revision',
      responses: { 200: { description: 'Service is up', schema: healthSchema } },
      handler: () => ({ status: 200, body: { status: 'ok', revision } }),
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      auth: 'none',
      tag: 'Health',
      audience: 'dashboard',
      summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text exposition format', contentType: 'text/plain' } },
      async handler({ ctx }) {
        ctx.type = registry.contentType;
        ctx.body = await registry.metrics();
      },
    }),
  ];
}
