import createClient, { type Client } from 'openapi-fetch';
import { idempotency, unwrap, type Body, type CreateOptions } from './calls';
import type { paths } from './generated/openapi';
import { paymasterPolicyMethods } from './paymasterPolicies';
import { refundMethods } from './refunds';
import { retryingFetch, type RequestDefaults, type RetryOptions } from './retryingFetch';

export interface StablePayOptions extends RetryOptions, RequestDefaults {
  /** The api's address, e.g. `http://localhost:3000` or `https://api.example.com`. */
  baseUrl: string;
  /** A secret API key `sk_...` (session creation, webhooks): sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** A merchant token (JWT) for the dashboard routes, used when no `apiKey` is given. */
  token?: string;
  /** A paymaster client id `pmc_...`, sent as `X-Client-Id`. */
  clientId?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** The underlying fetch (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * A client for the api: `raw` is the openapi-fetch client typed from the contract (every operation);
 * the named methods are the common calls, returning the answer's data and throwing StablePayError.
 */
export function createStablePayClient(options: StablePayOptions) {
  const credential = options.apiKey ?? options.token;
  const raw: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    headers: {
      ...(credential && { authorization: `Bearer ${credential}` }),
      ...(options.clientId && { 'x-client-id': options.clientId }),
      ...options.headers,
    },
    fetch: retryingFetch(options.fetch ?? globalThis.fetch, options, options),
  });

  return {
    raw,
    createSession: (body: Body<'/v1/sessions', 'post'>, { idempotencyKey }: CreateOptions = {}) =>
      unwrap(raw.POST('/v1/sessions', { body, headers: idempotency(idempotencyKey) })),
    getSession: (id: string) => unwrap(raw.GET('/v1/sessions/{id}', { params: { path: { id } } })),
    getSessionStatus: (id: string) =>
      unwrap(raw.GET('/v1/sessions/{id}/status', { params: { path: { id } } })),
    /** The merchant's sessions (merchant token). */
    listSessions: (query: paths['/v1/merchants/me/sessions']['get']['parameters']['query'] = {}) =>
      unwrap(raw.GET('/v1/merchants/me/sessions', { params: { query } })),
    createWebhookEndpoint: (body: Body<'/v1/webhooks', 'post'>) => unwrap(raw.POST('/v1/webhooks', { body })),
    listWebhookEndpoints: () => unwrap(raw.GET('/v1/webhooks')),
    rotateWebhookSecret: (id: string, body: Body<'/v1/webhooks/{id}/rotate-secret', 'post'> = {}) =>
      unwrap(raw.POST('/v1/webhooks/{id}/rotate-secret', { params: { path: { id } }, body })),
    listWebhookDeliveries: (id: string) =>
      unwrap(raw.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id } } })),
    resendWebhookDelivery: (id: string, deliveryId: string) =>
      unwrap(
        raw.POST('/v1/webhooks/{id}/deliveries/{deliveryId}/resend', {
          params: { path: { id, deliveryId } },
        }),
      ),
    /** A signed `endpoint.test` event to this endpoint, delivered and recorded like any event. */
    sendWebhookTestEvent: (id: string) =>
      unwrap(raw.POST('/v1/webhooks/{id}/send-test-event', { params: { path: { id } } })),
    createPlan: (body: Body<'/v1/plans', 'post'>) => unwrap(raw.POST('/v1/plans', { body })),
    listPlans: () => unwrap(raw.GET('/v1/plans')),
    getPlan: (id: string) => unwrap(raw.GET('/v1/plans/{id}', { params: { path: { id } } })),
    /** No new subscriber; the plan's subscriptions keep charging. */
    archivePlan: (id: string) => unwrap(raw.POST('/v1/plans/{id}/archive', { params: { path: { id } } })),
    listSubscriptions: (query: paths['/v1/subscriptions']['get']['parameters']['query'] = {}) =>
      unwrap(raw.GET('/v1/subscriptions', { params: { query } })),
    getSubscription: (id: string) => unwrap(raw.GET('/v1/subscriptions/{id}', { params: { path: { id } } })),
    /** At once (the default), or `{ atPeriodEnd: true }`: no further period is charged. */
    cancelSubscription: (id: string, body: Body<'/v1/subscriptions/{id}/cancel', 'post'> = {}) =>
      unwrap(raw.POST('/v1/subscriptions/{id}/cancel', { params: { path: { id } }, body })),
    ...refundMethods(raw),
    ...paymasterPolicyMethods(raw),
  };
}

export type StablePayClient = ReturnType<typeof createStablePayClient>;
