/** The API's answers the dashboard reads: the SDK's types generated from the service's contract. */
import type { components } from '../../sdk/src/generated/openapi';

type Schemas = components['schemas'];

export type MerchantProfile = Schemas['MerchantProfile'];
export type LoginResult = Schemas['LoginResult'];
export type SessionSummary = Schemas['SessionSummary'];
export type SessionStatus = SessionSummary['status'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type DeliveryAttempt = Schemas['WebhookDeliveryAttempt'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** A session's event with its deliveries (GET /v1/merchants/me/sessions/{id}/events). */
export type SessionEvent = Schemas['SessionEvent'];

export type Plan = Schemas['Plan'];
export type Subscription = Schemas['Subscription'];
export type SubscriptionStatus = Subscription['status'];

/** A page of a list: `{data, page, limit, total}` or, for cursor lists, `{data, nextCursor}`. */
export interface Page<T> {
  data: T[];
  page?: number;
  limit?: number;
  total?: number;
  hasMore?: boolean;
  nextCursor?: string | null;
}
