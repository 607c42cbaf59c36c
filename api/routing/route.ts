import type { Context } from 'koa';
import type { z } from 'zod';

/**
 * A route as SPEC's tables describe it: method, path, credential, inputs, outcomes. The same
 * definition mounts the handler, validates input, feeds the OpenAPI documents and the auth-matrix test.
 */
export type AuthKind = 'none' | 'jwt' | 'sk' | 'client';

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json. */
  contentType?: string;
}

/**
 * The per-client-IP allowances of the unauthenticated routes (api/rateLimits.ts): login
 * (RATE_LIMIT_LOGIN_PER_MINUTE) and the public reads (RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE).
 */
export type PerIpAllowance = 'login' | 'publicSession';

/** Who a route is for: the integrator contract carries health, sessions and the paymaster RPC/bundler. */
export type Audience = 'integrator' | 'dashboard';

export interface RouteInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  /** The authenticated merchant (jwt and sk routes). */
  merchantId: string;
  ctx: Context;
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteDefinition<B = unknown, Q = unknown, P = unknown> {
  method: HttpMethod;
  /** Koa path, e.g. `/v1/sessions/:id`. */
  path: string;
  auth: AuthKind;
  summary: string;
  tag: string;
  audience: Audience;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  responses: Record<number, ResponseSpec>;
  /**
   * The per-client-IP allowance the route spends, taken before anything else of the route runs. It
   * belongs to the route the router matched, so every spelling of the path the router answers (trailing
   * slash, another case, HEAD for GET) spends the same allowance (security review III, finding 1).
   */
  perIpLimit?: PerIpAllowance;
  /** The handler honours the `Idempotency-Key` header (api/routing/idempotency.ts): the contract declares it. */
  idempotencyKey?: boolean;
  /** Returns the response, or undefined when it wrote ctx itself (CSV, PDF, HTML, JSON-RPC). */
  handler: (input: RouteInput<B, Q, P>) => Promise<HandlerResult | void> | HandlerResult | void;
}

/** Identity helper that infers the input types from the zod schemas. */
export function defineRoute<B = undefined, Q = undefined, P = undefined>(
  route: RouteDefinition<B, Q, P>,
): RouteDefinition<B, Q, P> {
  return route;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDefinition<any, any, any>;
