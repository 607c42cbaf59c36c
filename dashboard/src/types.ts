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

/** A merchant-paid refund's prepared ERC-20 transfer (token base units, exact). */
export type PreparedTransfer = NonNullable<Schemas['Refund']['transfer']>;

/**
 * A forwarder refund's authorization while it awaits one: the payout address and the EIP-712 typed data it
 * signs with eth_signTypedData_v4 (uint256 values as decimal strings).
 */
export interface RefundAuthorization {
  signer: string;
  typedData: {
    domain: Record<string, unknown>;
    types: Record<string, { name: string; type: string }[]>;
    primaryType: string;
    message: Record<string, unknown>;
  };
}

/** A refund of a session (GET /v1/merchants/me/sessions/{id}/refunds), with its authorization when it awaits one. */
export type Refund = Omit<Schemas['Refund'], 'authorization'> & {
  authorization?: RefundAuthorization | null;
};
