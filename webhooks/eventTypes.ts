/**
 * The event types an endpoint can subscribe to (docs/service-contract.md "Events (webhooks)"), each with the group it belongs to and
 * one line on when it is sent: the server's one list. The API validates `events` against it, the
 * contract documents it, and the dashboard's endpoint form is built from it (imported into the bundle:
 * plain data, no server code). A type added here appears in all three.
 */
export const SESSION_EVENT_TYPES = [
  'session.confirming',
  'session.completed',
  'session.expired',
  'session.underpaid',
  'session.failed',
  'session.overpaid',
  'session.paid_late',
] as const;
export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];

/** A refund's outcome (issue 41): `data.refund` and `data.session`, once per refund and type. */
export const REFUND_EVENT_TYPES = ['refund.succeeded', 'refund.failed'] as const;
export type RefundEventType = (typeof REFUND_EVENT_TYPES)[number];

/** A subscription's life (issue 42): subscribed, a period charged, a charge failed, ended. */
export const SUBSCRIPTION_EVENT_TYPES = [
  'subscription.created',
  'subscription.renewed',
  'subscription.payment_failed',
  'subscription.canceled',
] as const;
export type SubscriptionEventType = (typeof SUBSCRIPTION_EVENT_TYPES)[number];

export const WEBHOOK_EVENT_TYPES = [
  ...SESSION_EVENT_TYPES,
  ...REFUND_EVENT_TYPES,
  ...SUBSCRIPTION_EVENT_TYPES,
  'endpoint.disabled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What an endpoint subscribes to when its creation names no events (docs/service-contract.md "Events (webhooks)"). */
export const DEFAULT_WEBHOOK_EVENTS: WebhookEventType[] = ['session.confirming'];

export interface EventTypeGuide {
  /** The heading the type is listed under (Sessions, Endpoints, …). */
  group: string;
  /** When the service sends it, in one line for the merchant. */
  sentWhen: string;
}

/** Every subscribable type's group and line: a type without one fails the type check. */
export const WEBHOOK_EVENT_GUIDE: { readonly [Type in WebhookEventType]: EventTypeGuide } = {
  'session.confirming': {
    group: 'Sessions',
    sentWhen: 'A deposit was seen: the session left awaiting payment. Once per session.',
  },
  'session.completed': {
    group: 'Sessions',
    sentWhen: 'The settlement was delivered to you (also after a repair). Once per session.',
  },
  'session.expired': {
    group: 'Sessions',
    sentWhen: 'The session expired with no deposit. Once per session.',
  },
  'session.underpaid': {
    group: 'Sessions',
    sentWhen: 'The session expired with part of the amount paid. Once per session.',
  },
  'session.failed': {
    group: 'Sessions',
    sentWhen: 'The settlement failed; retry-forwarder can repair it. Once per failure.',
  },
  'session.overpaid': {
    group: 'Sessions',
    sentWhen: 'The session completed having received more than its amount. Once per session.',
  },
  'session.paid_late': {
    group: 'Sessions',
    sentWhen: 'A deposit reached the session after it expired. Once per such deposit.',
  },
  'refund.succeeded': {
    group: 'Refunds',
    sentWhen: 'A refund reached the payer: its transfer is confirmed on chain. Once per refund.',
  },
  'refund.failed': {
    group: 'Refunds',
    sentWhen: 'A refund could not be paid; its amount is refundable again. Once per refund.',
  },
  'subscription.created': {
    group: 'Subscriptions',
    sentWhen: 'A customer subscribed to one of your plans. Once per subscription.',
  },
  'subscription.renewed': {
    group: 'Subscriptions',
    sentWhen:
      'A period was charged into its payment session, which then settles like any other. Once per period.',
  },
  'subscription.payment_failed': {
    group: 'Subscriptions',
    sentWhen:
      'A period could not be charged (balance, revoked or expired permission); says when it is tried again.',
  },
  'subscription.canceled': {
    group: 'Subscriptions',
    sentWhen: 'The subscription ended: canceled by you or the customer, or unpaid at the end of its period.',
  },
  'endpoint.disabled': {
    group: 'Endpoints',
    sentWhen: 'Another of your endpoints was disabled after 5 days of failed deliveries.',
  },
};

export interface EventTypeGroup {
  group: string;
  types: { type: WebhookEventType; sentWhen: string }[];
}

/** The subscribable types under their groups, both in the order of WEBHOOK_EVENT_TYPES; no empty group. */
export function webhookEventGroups(): EventTypeGroup[] {
  const groups: EventTypeGroup[] = [];
  for (const type of WEBHOOK_EVENT_TYPES) {
    const { group, sentWhen } = WEBHOOK_EVENT_GUIDE[type];
    const found = groups.find((entry) => entry.group === group);
    if (found) found.types.push({ type, sentWhen });
    else groups.push({ group, types: [{ type, sentWhen }] });
  }
  return groups;
}
