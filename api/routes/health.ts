import type { Registry } from 'prom-client';
import { z } from 'zod';
import { readinessText, type Readiness } from '../../health/readiness';
import { defineRoute, type AnyRoute } from '../routing/route';

/**
 * | GET | /health  | none | 200 `{ status: "ok", revision }` (liveness: the process answers)           |
 * | GET | /ready   | none | 200 or 503, one line per dependency (Postgres, Temporal, the signer)      |
 * | GET | /metrics | none | 200 Prometheus text format                                                |
 */
const healthSchema = z.object({ status: z.literal('ok'), revision: z.string() }).meta({ id: 'Health' });

export function healthRoutes({
  revision,
  registry,
  readiness,
}: {
  revision: string;
  registry: Registry;
  readiness: () => Promise<Readiness>;
}): AnyRoute[] {
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
      path: '/ready',
      auth: 'none',
      tag: 'Health',
      audience: 'dashboard',
      summary: 'Readiness: every dependency answered within its deadline (one line each)',
      responses: {
        200: { description: 'Ready: every dependency answered', contentType: 'text/plain' },
        503: {
          description: 'Not ready: the lines say which dependency did not answer',
          contentType: 'text/plain',
        },
      },
      async handler({ ctx }) {
        const result = await readiness();
        ctx.status = result.ready ? 200 : 503;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = readinessText(result);
      },
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
