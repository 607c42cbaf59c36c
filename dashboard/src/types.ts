/** The API's answers the dashboard reads (their full schemas are in /openapi.json). */

export interface MerchantProfile {
  id: string;
  walletAddress: string;
  name: string | null;
  email: string | null;
  emailVerified?: boolean;
  payoutAddress: string;
  createdAt: string;
  updatedAt: string;
}

export interface LoginResult {
  token: string;
  expiresAt: string;
  merchant: MerchantProfile;
}

export type SessionStatus =
  'pending' | 'awaiting_payment' | 'confirming' | 'bridging' | 'completed' | 'failed' | 'expired';

export interface SessionSummary {
  id: string;
  paymentUrl: string;
  status: SessionStatus;
  amount: string;
  settledAmount: string;
  merchantName: string | null;
  sandboxMode: boolean;
  expiresAt: string;
  createdAt: string;
  paidAt?: string;
  txHash?: string;
  webhookDelivered: boolean;
  failureReason: string | null;
}

export interface Page<T> {
  data: T[];
  page?: number;
  limit?: number;
  total?: number;
  hasMore?: boolean;
  nextCursor?: string | null;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
}

export interface DeliveryAttempt {
  attemptNumber: number;
  attemptedAt: string;
  outcome: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  resendOf: string | null;
  createdAt: string;
  attempts: DeliveryAttempt[];
}

/** A session's event with its deliveries (GET /v1/merchants/me/sessions/{id}/events). */
export interface SessionEvent {
  id: string;
  type: string;
  createdAt: string;
  deliveryCount: number;
  deliveries: (WebhookDelivery & { endpointId: string; endpointUrl: string })[];
}
