import { createHash, timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { readinessText, type Readiness } from '../../health/readiness';
import { notFound, unauthorized } from '../httpErrors';
import { defineRoute, type AnyRoute } from '../routing/route';

/**
 * Who may read /metrics (process and route figures help an attacker): with METRICS_TOKEN, only a
 * request bearing it; without one, nobody in production (the route answers 404) and anybody elsewhere.
 */
export function metricsAccess({
  token,
  production,
}: {
  token?: string;
  production: boolean;
}): (authorization: string | undefined) => 'allowed' | 'unauthorized' | 'off' {
  if (!token) return () => (production ? 'off' : 'allowed');
  // Compared as digests: constant time, whatever the lengths.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  const expected = digest(`Bearer ${token}`);
  return (authorization) =>
    authorization !== undefined && timingSafeEqual(digest(authorization), expected)
      ? 'allowed'
      : 'unauthorized';
}

/**
 * | GET | /health  | none | 200 `{ status: "ok", revision }` (liveness: the process answers)           |
 * | GET | /ready   | none | 200 or 503, one line per dependency (Postgres, Temporal, the signer)      |
 * | GET | /metrics | METRICS_TOKEN bearer | 200 Prometheus text format; 401 without the token; 404 when off |
 */
const healthSchema = z.object({ status: z.literal('ok'), revision: z.string() }).meta({ id: 'Health' });

export function healthRoutes({
  revision,
  registry,
  readiness,
  metricsAccessOf,
}: {
  revision: string;
  registry: Registry;
  readiness: () => Promise<Readiness>;
  metricsAccessOf: ReturnType<typeof metricsAccess>;
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
      responses: {
        200: { description: 'Prometheus text exposition format', contentType: 'text/plain' },
        401: { description: 'METRICS_TOKEN is set and the request does not bear it (Authorization: Bearer)' },
        404: { description: 'Off: production without METRICS_TOKEN' },
      },
      async handler({ ctx }) {
        const access = metricsAccessOf(ctx.get('authorization') || undefined);
        if (access === 'off') throw notFound();
        if (access === 'unauthorized') throw unauthorized('Metrics need the bearer token (METRICS_TOKEN)');
        ctx.type = registry.contentType;
        ctx.body = await registry.metrics();
      },
    }),
  ];
}
