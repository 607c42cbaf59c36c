import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logging/logger';
import type { HttpMetrics } from '../metrics';

const REQUEST_ID_HEADER = 'x-request-id';
const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when well-formed), a child logger that
 * carries it, and one JSON access-log line plus a metrics observation when it ends.
 */
export function requestContext(logger: Logger, metrics: HttpMetrics): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get(REQUEST_ID_HEADER);
    const requestId = acceptableRequestId.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The matched route pattern keeps metric labels bounded (never the raw path with ids).
      const route: string = ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched';
      metrics.observe(ctx.method, route, ctx.status, durationMs / 1000);
      ctx.state.log.info(
        {
          method: ctx.method,
          route,
          path: ctx.path,
          status: ctx.status,
          durationMs: Math.round(durationMs * 100) / 100,
        },
        'request',
      );
    }
  };
}
