import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logging/logger';
import type { HttpMetrics } from '../metrics';

const REQUEST_ID_HEADER = 'x-request-id';
const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when well-formed), a child logger that
 * carries it, and one JSON access-log line plus a metrics observation when it ends.
 *
 * The child logger (`ctx.state.log`) is built the first time something reads it: most requests log
 * nothing but the access line, which is written through the app's logger with the id as its first field
 * (the same JSON, field for field, as a child's line: pino writes a child's bindings right where the
 * line's own fields begin).
 */
export function requestContext(logger: Logger, metrics: HttpMetrics): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.req.headers[REQUEST_ID_HEADER];
    const requestId =
      typeof incoming === 'string' && acceptableRequestId.test(incoming) ? incoming : randomUUID();
    const state = ctx.state as { requestId: string; log?: Logger };
    state.requestId = requestId;
    let child: Logger | undefined;
    Object.defineProperty(state, 'log', {
      configurable: true,
      enumerable: true,
      get: () => (child ??= logger.child({ requestId })),
      set: (value: Logger) => {
        child = value;
      },
    });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The matched route pattern keeps metric labels bounded (never the raw path with ids).
      const route: string = ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched';
      const method = ctx.method;
      const status = ctx.status;
      metrics.observe(method, route, status, durationMs / 1000);
      (child ?? logger).info(
        child
          ? { method, route, path: ctx.path, status, durationMs: Math.round(durationMs * 100) / 100 }
          : {
              requestId,
              method,
              route,
              path: ctx.path,
              status,
              durationMs: Math.round(durationMs * 100) / 100,
            },
        'request',
      );
    }
  };
}
