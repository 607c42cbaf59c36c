/**
 * Every event type the service emits and the exact shape of each body on the wire (docs/service-contract.md "Events (webhooks)"):
 * SPEC's `session.confirming`, the session lifecycle types, the subscription types, `endpoint.disabled`, and `endpoint.test`
 * (sent on request to one endpoint). An endpoint receives only the types it lists (the lists are in
 * eventTypes.ts), and the test events asked for it. This module is the one place the wire shapes are
 * written down.
 */
import { ENDPOINT_TEST_EVENT_TYPE } from '../db/events';
import type { SettlementReceived } from '../db/sessionEvents';
import type { RefundModel } from './refundObject';
import {
  DEFAULT_WEBHOOK_EVENTS,
  REFUND_EVENT_TYPES,
  SESSION_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
  type RefundEventType,
  type SessionEventType,
  type WebhookEventType,
} from './eventTypes';
import type { SessionStatus } from '../db/sessionStatus';
import type { SubscriptionModel } from '../subscriptions/subscriptionModel';

export {
  DEFAULT_WEBHOOK_EVENTS,
  ENDPOINT_TEST_EVENT_TYPE,
  REFUND_EVENT_TYPES,
  SESSION_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
};
export type { RefundEventType, SessionEventType, WebhookEventType };

/**
 * `data.session` of every session event: SPEC's Events fields, with the session's status when the
 * event was made. `paidAt` and `txHash` are null while no deposit was recorded (expired, underpaid).
 */
export interface EventSession<Status extends string = string> {
  id: string;
  merchantName: string | null;
  /** Decimal USD string, e.g. "19.99". */
  amount: string;
  status: Status;
  expiresAt: string;
  createdAt: string;
  paidAt: string | null;
  /** The deposit transaction, 0x hex. */
  txHash: string | null;
}

/** What the merchant received (`session.completed`): the settlement's on-chain result, as db/sessionEvents.ts reads it. */
export type EventSettlement = SettlementReceived;

interface EventEnvelope<Type extends WebhookEventType | typeof ENDPOINT_TEST_EVENT_TYPE, Data> {
  /** `evt_<uuid>` */
  id: string;
  type: Type;
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string;
  data: Data;
}

/** The body of a `session.confirming` delivery, field for field as SPEC's Events section lists it. */
export type SessionConfirmingEvent = EventEnvelope<
  'session.confirming',
  { session: EventSession<'confirming'> & { paidAt: string; txHash: string } }
>;
/** Settlement delivered to the merchant. */
export type SessionCompletedEvent = EventEnvelope<
  'session.completed',
  { session: EventSession<'completed'>; settlement: EventSettlement }
>;
/** Expiry passed with no deposit. */
export type SessionExpiredEvent = EventEnvelope<'session.expired', { session: EventSession<'expired'> }>;
/** Expiry passed with a partial deposit; `receivedAmount` is what arrived before expiry (decimal USD). */
export type SessionUnderpaidEvent = EventEnvelope<
  'session.underpaid',
  { session: EventSession<'expired'>; receivedAmount: string }
>;
/** Settlement failed; retry-forwarder can repair it. One per failure. */
export type SessionFailedEvent = EventEnvelope<
  'session.failed',
  { session: EventSession<'failed'>; failureReason: string }
>;
/**
 * Completed with more than the amount (issue 41): `receivedAmount` is every transfer into the session at
 * completion and `overpaidAmount` what exceeds `amount` (decimal USD, stablecoins at par, exact).
 */
export type SessionOverpaidEvent = EventEnvelope<
  'session.overpaid',
  { session: EventSession<'completed'>; receivedAmount: string; overpaidAmount: string }
>;
/**
 * A deposit mined after the session expired (issue 41), one event per such deposit: `txHash` is that
 * deposit's transaction, `receivedAmount` everything the session has received with it (decimal USD, exact).
 */
export type SessionPaidLateEvent = EventEnvelope<
  'session.paid_late',
  { session: EventSession<Exclude<SessionStatus, 'pending'>>; receivedAmount: string; txHash: string }
>;
/**
 * A refund's outcome (issue 41): `data.refund` is the refund object as the API reads it (`claimUrl` null),
 * `data.session` the session it refunds, with its status then.
 */
export type RefundEvent = EventEnvelope<
  RefundEventType,
  { refund: RefundModel; session: EventSession<Exclude<SessionStatus, 'pending'>> }
>;
/** An endpoint was disabled for failing (docs/decisions.md "Webhook delivery operations"): sent to the merchant's other endpoints that list it. */
export type EndpointDisabledEvent = EventEnvelope<
  'endpoint.disabled',
  { endpoint: { id: string; url: string; disabledAt: string } }
>;

/**
 * A test the merchant asked for (`POST …/webhooks/{id}/send-test-event`): a fixed body naming the
 * endpoint, signed and delivered like any other event, to that endpoint only.
 */
export type EndpointTestEvent = EventEnvelope<
  typeof ENDPOINT_TEST_EVENT_TYPE,
  { endpoint: { id: string; url: string }; message: typeof ENDPOINT_TEST_MESSAGE }
>;

/** The test event's fixed text: a receiver that logs it knows no payment is behind it. */
export const ENDPOINT_TEST_MESSAGE =
  'A test event you asked for: no session or payment is behind it.' as const;

export type SessionEvent =
  | SessionConfirmingEvent
  | SessionCompletedEvent
  | SessionExpiredEvent
  | SessionUnderpaidEvent
  | SessionFailedEvent
  | SessionOverpaidEvent
  | SessionPaidLateEvent;
/** `data.subscription`: the subscription object of the routes, as it was when the event was made. */
export type EventSubscription = SubscriptionModel;

/** `data.session` of `subscription.renewed`: the period's payment session when its charge was recorded. */
export interface EventPeriodSession {
  id: string;
  amount: string;
  status: string;
  expiresAt: string;
  createdAt: string;
}

export type SubscriptionCreatedEvent = EventEnvelope<
  'subscription.created',
  { subscription: EventSubscription }
>;
export type SubscriptionRenewedEvent = EventEnvelope<
  'subscription.renewed',
  { subscription: EventSubscription; session: EventPeriodSession; periodIndex: number; txHash: string }
>;
export type SubscriptionPaymentFailedEvent = EventEnvelope<
  'subscription.payment_failed',
  { subscription: EventSubscription; failureReason: string; nextAttemptAt: string | null }
>;
export type SubscriptionCanceledEvent = EventEnvelope<
  'subscription.canceled',
  { subscription: EventSubscription }
>;
export type SubscriptionEvent =
  | SubscriptionCreatedEvent
  | SubscriptionRenewedEvent
  | SubscriptionPaymentFailedEvent
  | SubscriptionCanceledEvent;

export type WebhookEvent =
  SessionEvent | RefundEvent | SubscriptionEvent | EndpointDisabledEvent | EndpointTestEvent;

export const newEventId = (uuid: string) => `evt_${uuid}`;

/** `data.session` in SPEC's key order, whatever order the caller built it in. */
function sessionInWireOrder(session: EventSession) {
  return {
    id: session.id,
    merchantName: session.merchantName,
    amount: session.amount,
    status: session.status,
    expiresAt: session.expiresAt,
    createdAt: session.createdAt,
    paidAt: session.paidAt,
    txHash: session.txHash,
  };
}

/** `data` after `session`, in a fixed key order per type. */
function sessionEventExtras(event: SessionEvent): Record<string, unknown> {
  switch (event.type) {
    case 'session.completed': {
      const { settlement } = event.data;
      return {
        settlement: {
          chainId: settlement.chainId,
          txHash: settlement.txHash,
          asset: settlement.asset,
          assetAmount: settlement.assetAmount,
          shares: settlement.shares,
        },
      };
    }
    case 'session.underpaid':
      return { receivedAmount: event.data.receivedAmount };
    case 'session.failed':
      return { failureReason: event.data.failureReason };
    case 'session.overpaid':
      return { receivedAmount: event.data.receivedAmount, overpaidAmount: event.data.overpaidAmount };
    case 'session.paid_late':
      return { receivedAmount: event.data.receivedAmount, txHash: event.data.txHash };
    default:
      return {};
  }
}

/**
 * The event and its payload, serialised once: the stored string is the exact body of every
 * delivery, so each signature covers the bytes the receiver gets.
 */
export function serialiseSessionEvent(event: SessionEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    data: { session: sessionInWireOrder(event.data.session), ...sessionEventExtras(event) },
  });
}

/** SPEC's `session.confirming` body (kept by name for the callers that make only that one). */
export function serialiseSessionConfirmingEvent(event: SessionConfirmingEvent): string {
  return serialiseSessionEvent(event);
}

/** `data` of a subscription event in a fixed key order: the subscription first, then the type's own fields. */
function subscriptionEventData(event: SubscriptionEvent): Record<string, unknown> {
  const data: Record<string, unknown> = { subscription: subscriptionInWireOrder(event.data.subscription) };
  switch (event.type) {
    case 'subscription.renewed': {
      const { session } = event.data;
      data.session = {
        id: session.id,
        amount: session.amount,
        status: session.status,
        expiresAt: session.expiresAt,
        createdAt: session.createdAt,
      };
      data.periodIndex = event.data.periodIndex;
      data.txHash = event.data.txHash;
      break;
    }
    case 'subscription.payment_failed':
      data.failureReason = event.data.failureReason;
      data.nextAttemptAt = event.data.nextAttemptAt;
      break;
    default:
      break;
  }
  return data;
}

function subscriptionInWireOrder(subscription: EventSubscription): EventSubscription {
  return {
    id: subscription.id,
    planId: subscription.planId,
    status: subscription.status,
    customerAccount: subscription.customerAccount,
    chainId: subscription.chainId,
    token: subscription.token,
    currentPeriodStart: subscription.currentPeriodStart,
    currentPeriodEnd: subscription.currentPeriodEnd,
    cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
    canceledAt: subscription.canceledAt,
    latestSessionId: subscription.latestSessionId,
  };
}

/** Serialised once, in a fixed key order, like every event body. */
export function serialiseSubscriptionEvent(event: SubscriptionEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    data: subscriptionEventData(event),
  });
}

/** Serialised once, in a fixed key order, like every event body. */
export function serialiseEndpointDisabledEvent(event: EndpointDisabledEvent): string {
  const { endpoint } = event.data;
  return JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    data: { endpoint: { id: endpoint.id, url: endpoint.url, disabledAt: endpoint.disabledAt } },
  });
}

/** Serialised once, in a fixed key order, like every event body. */
export function serialiseEndpointTestEvent(event: EndpointTestEvent): string {
  const { endpoint, message } = event.data;
  return JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    data: { endpoint: { id: endpoint.id, url: endpoint.url }, message },
  });
}

/** Serialised once, in a fixed key order (the refund object's own, then the session's), like every event body. */
export function serialiseRefundEvent(event: RefundEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    data: { refund: event.data.refund, session: sessionInWireOrder(event.data.session) },
  });
}
