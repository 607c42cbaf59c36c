import type { Middleware } from 'koa';
import { isDatabaseUnavailable } from '../../db/databaseUnavailable';
import { TemporalUnavailableError } from '../../workflowClient/connection';
import { HttpError, methodNotAllowed, notFound, serviceUnavailable } from '../httpErrors';

/**
 * Turns every failure into the framework-style body `{ statusCode, message, error }`.
 * A database that did not answer in time is a 503 with Retry-After (the request was not applied);
 * unknown errors become a 500 whose message reveals nothing; the log keeps the details.
 * Routes that answer JSON-RPC set their own body and never throw past this point.
 */
export function errorBody(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw notFound(`Cannot ${ctx.method} ${ctx.path}`);
      // The router answers a method the path lacks with a bare 405, and one it implements nowhere (TRACE)
      // with a bare 501 (on any path, known or not): both are the client's mistake, so a known path
      // answers 405 naming its methods and an unknown one 404.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        const allow = ctx.response.get('allow');
        ctx.remove('allow');
        throw allow
          ? methodNotAllowed(ctx.method, ctx.path, allow)
          : notFound(`Cannot ${ctx.method} ${ctx.path}`);
      }
    } catch (caught) {
      const error = asHttpError(caught);
      if (error.statusCode === 503) ctx.state.log?.warn({ err: caught }, 'dependency unavailable');
      else if (error.statusCode >= 500) ctx.state.log?.error({ err: caught }, 'unhandled error');
      ctx.status = error.statusCode;
      ctx.set(error.headers);
      ctx.body = error.toBody();
    }
  };
}

function asHttpError(caught: unknown): HttpError {
  if (caught instanceof HttpError) return caught;
  // koa's ctx.throw and body parsers raise http-errors style objects with an expose flag.
  if (isExposableError(caught)) return new HttpError(caught.status, caught.message);
  if (caught instanceof TemporalUnavailableError)
    return serviceUnavailable(
      'Service temporarily unavailable: the workflow engine did not answer in time; retry shortly',
    );
  if (isDatabaseUnavailable(caught))
    return serviceUnavailable(
      'Service temporarily unavailable: the database did not answer in time; retry shortly',
    );
  return new HttpError(500, 'Internal Server Error');
}

function isExposableError(value: unknown): value is { status: number; message: string; expose: true } {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { expose?: unknown }).expose === true &&
    typeof (value as { status?: unknown }).status === 'number'
  );
}
