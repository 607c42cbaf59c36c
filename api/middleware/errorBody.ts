import type { Middleware } from 'koa';
import { HttpError, notFound } from '../httpErrors';

/**
 * Turns every failure into the framework-style body `{ statusCode, message, error }`.
 * Unknown errors become a 500 whose message reveals nothing; the log keeps the details.
 * Routes that answer JSON-RPC set their own body and never throw past this point.
 */
export function errorBody(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw notFound(`Cannot ${ctx.method} ${ctx.path}`);
    } catch (caught) {
      const error = asHttpError(caught);
      if (error.statusCode >= 500) ctx.state.log?.error({ err: caught }, 'unhandled error');
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
