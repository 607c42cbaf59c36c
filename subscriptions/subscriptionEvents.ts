import type { Db } from '../db/client';
import { insertEventOnceById, type EventRow } from '../db/events';
import type { SubscriptionRow } from '../db/subscriptions';
import {
  newEventId,
  serialiseSubscriptionEvent,
  type EventPeriodSession,
  type SubscriptionEvent,
} from '../webhooks/events';
import { nameBasedUuid } from './nameBasedIds';
import { toSubscriptionModel } from './subscriptionModel';

/**
 * A subscription's events (issue 42), each stored once per occasion: its id is derived from the
 * subscription and the occasion (`created`, `renewed:<period>`, `payment_failed:<period>:<attempt>`,
 * `canceled`), so whoever stores it again — a retried activity, the api and the workflow both seeing a
 * cancelation — gets the first event back, id and bytes unchanged, and its deliveries start once.
 */

/** `evt_<uuid>` from the subscription and the occasion. */
export const subscriptionEventId = (subscriptionId: string, occasion: string) =>
  newEventId(nameBasedUuid(`subscription-event:${subscriptionId}:${occasion}`));

/** What each type carries beside the subscription, and the occasion that makes it one of a kind. */
export type SubscriptionOccasion =
  | { type: 'subscription.created' }
  | { type: 'subscription.canceled' }
  | {
      type: 'subscription.renewed';
      periodIndex: number;
      session: EventPeriodSession;
      txHash: string;
    }
  | {
      type: 'subscription.payment_failed';
      periodIndex: number;
      attempt: number;
      failureReason: string;
      nextAttemptAt: string | null;
    };

function occasionKey(occasion: SubscriptionOccasion): string {
  switch (occasion.type) {
    case 'subscription.renewed':
      return `renewed:${occasion.periodIndex}`;
    case 'subscription.payment_failed':
      return `payment_failed:${occasion.periodIndex}:${occasion.attempt}`;
    default:
      return occasion.type.slice('subscription.'.length);
  }
}

function eventOf(id: string, createdAt: string, row: SubscriptionRow, occasion: SubscriptionOccasion) {
  const subscription = toSubscriptionModel(row);
  const envelope = { id, createdAt };
  switch (occasion.type) {
    case 'subscription.renewed':
      return {
        ...envelope,
        type: occasion.type,
        data: {
          subscription,
          session: occasion.session,
          periodIndex: occasion.periodIndex,
          txHash: occasion.txHash,
        },
      } satisfies SubscriptionEvent;
    case 'subscription.payment_failed':
      return {
        ...envelope,
        type: occasion.type,
        data: {
          subscription,
          failureReason: occasion.failureReason,
          nextAttemptAt: occasion.nextAttemptAt,
        },
      } satisfies SubscriptionEvent;
    default:
      return { ...envelope, type: occasion.type, data: { subscription } } satisfies SubscriptionEvent;
  }
}

/** Stores the occasion's event with the subscription as `row` shows it (once: see above). */
export async function storeSubscriptionEvent(
  db: Db,
  row: SubscriptionRow,
  occasion: SubscriptionOccasion,
  now: Date,
): Promise<EventRow> {
  const id = subscriptionEventId(row.id, occasionKey(occasion));
  return insertEventOnceById(db, {
    id,
    type: occasion.type,
    merchantId: row.merchant_id,
    sessionId: null,
    payload: serialiseSubscriptionEvent(eventOf(id, now.toISOString(), row, occasion)),
    createdAt: now,
  });
}
