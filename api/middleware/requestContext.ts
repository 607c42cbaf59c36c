import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logging/logger';
import type { HttpMetrics } from '../metrics';

export const REQUEST_ID_HEADER = 'x-request-id';
export const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * `ctx.state` of a request: the id, and a child logger carrying it that is built the first time
 * something reads `log` (most requests log nothing but the access line). Other middleware add their own
 * fields (merchantId, body, …) as on the plain object Koa creates.
 */
class RequestState {
  private child: Logger | undefined;
  constructor(
    private readonly logger: Logger,
    readonly requestId: string,
  ) {}

  get log(): Logger {
    return (this.child ??= this.logger.child({ requestId: this.requestId }));
  }

  set log(value: Logger) {
    this.child = value;
  }
}

/**
 * Gives every request an id (the caller's X-Request-Id when well-formed), a child logger that
 * carries it, and one JSON access-log line plus a metrics observation when it ends.
 *
 * The access line is written by a child of the app's logger made once, whose redaction is off: its
 * fields are the request id, method, route pattern, path, status and duration, none of them a secret, and
 * the redaction paths were the largest cost of the line. Its JSON is the same, field for field, as a
 * per-request child's: pino writes a child's bindings right where the line's own fields begin.
 */
export function requestContext(logger: Logger, metrics: HttpMetrics): Middleware {
  const accessLog = logger.child({}, { redact: [] });
  return async (ctx, next) => {
    const incoming = ctx.req.headers[REQUEST_ID_HEADER];
    const requestId =
      typeof incoming === 'string' && acceptableRequestId.test(incoming) ? incoming : randomUUID();
    ctx.state = new RequestState(logger, requestId);
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
      accessLog.info(
        { requestId, method, route, path: ctx.path, status, durationMs: Math.round(durationMs * 100) / 100 },
        'request',
      );
    }
  };
}
