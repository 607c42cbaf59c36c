/**
 * The event types a webhook endpoint can subscribe to: SPEC's `session.confirming`, and the types of
 * DESIGN §8.3 the service emits. An endpoint receives only the types it lists.
 */
export const WEBHOOK_EVENT_TYPES = ['session.confirming', 'endpoint.disabled'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What an endpoint subscribes to when its creation names no events (DESIGN §5). */
export const DEFAULT_WEBHOOK_EVENTS: WebhookEventType[] = ['session.confirming'];

/** The body of a `session.confirming` delivery, field for field as SPEC's Events section lists it. */
export interface SessionConfirmingEvent {
  /** `evt_<uuid>` */
  id: string;
  type: 'session.confirming';
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string;
  data: {
    session: {
      id: string;
      merchantName: string | null;
      /** Decimal USD string, e.g. "19.99". */
      amount: string;
      status: 'confirming';
      expiresAt: string;
      createdAt: string;
      paidAt: string;
      /** The deposit transaction, 0x hex. */
      txHash: string;
    };
  };
}

export const newEventId = (uuid: string) => `evt_${uuid}`;

/**
 * The event and its payload, serialised once: the stored string is the exact body of every
 * delivery, so each signature covers the bytes the receiver gets.
 */
export function serialiseSessionConfirmingEvent(event: SessionConfirmingEvent): string {
  // Built field by field so the key order on the wire is SPEC's order, whatever the caller passed.
  const { session } = event.data;
  return JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    data: {
      session: {
        id: session.id,
        merchantName: session.merchantName,
        amount: session.amount,
        status: session.status,
        expiresAt: session.expiresAt,
        createdAt: session.createdAt,
        paidAt: session.paidAt,
        txHash: session.txHash,
      },
    },
  });
}

/** The body of an `endpoint.disabled` delivery (DESIGN §8.3): sent to the merchant's other endpoints that list it. */
export interface EndpointDisabledEvent {
  /** `evt_<uuid>` */
  id: string;
  type: 'endpoint.disabled';
  createdAt: string;
  data: { endpoint: { id: string; url: string; disabledAt: string } };
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
