import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { normaliseDecimal } from '../money/baseUnits';
import type { Db } from '../db/client';
import { findEventById, insertSessionEventOnce, type EventRow } from '../db/events';
import { findSessionById } from '../db/sessions';
import { listSubscribedEndpoints } from '../db/webhooks';
import { newEventId, serialiseSessionConfirmingEvent } from '../webhooks/events';

/** Activities the payment-session workflow calls when a session becomes `confirming`. */
export interface SessionEventActivityDependencies {
  db: Db;
  /** Starts the delivery workflow of the event to the endpoint (workflowClient/webhookDeliveries.ts, bound to the deployment's webhook queue). */
  startWebhookDelivery: WebhookDeliveryStarter;
}

/**
 * Starts one (event, endpoint) delivery workflow; a workflow that exists already answers `already_started`.
 */
export type WebhookDeliveryStarter = (target: {
  eventId: string;
  endpointId: string;
}) => Promise<'started' | 'already_started'>;

export interface RecordedEvent {
  id: string;
  type: string;
}

export function createSessionEventActivities({ db, startWebhookDelivery }: SessionEventActivityDependencies) {
  return {
    /**
     * Stores the session's `session.confirming` event, its payload serialised once; idempotent:
     * a replay or a retry returns the event stored first (same id, same bytes).
     */
    async recordSessionConfirmingEvent({ sessionId }: { sessionId: string }): Promise<RecordedEvent> {
      const session = await findSessionById(db, sessionId);
      if (!session?.paid_at || !session.tx_hash) {
        throw ApplicationFailure.nonRetryable(
          `session ${sessionId} has no recorded deposit`,
          'SessionNotConfirming',
        );
      }
      const id = newEventId(randomUUID());
      const createdAt = new Date();
      const payload = serialiseSessionConfirmingEvent({
        id,
        type: 'session.confirming',
        createdAt: createdAt.toISOString(),
        data: {
          session: {
            id: session.id,
            merchantName: session.merchant_name,
            amount: normaliseDecimal(session.amount),
            status: 'confirming',
            expiresAt: session.expires_at.toISOString(),
            createdAt: session.created_at.toISOString(),
            paidAt: session.paid_at.toISOString(),
            txHash: session.tx_hash,
          },
        },
      });
      const stored = await insertSessionEventOnce(db, {
        id,
        type: 'session.confirming',
        merchantId: session.merchant_id,
        sessionId,
        payload,
        createdAt,
      });
      return { id: stored.id, type: stored.type };
    },

    /**
     * Starts one delivery workflow per enabled endpoint of the merchant subscribed to the event;
     * idempotent (a workflow that exists already counts as started).
     */
    async startWebhookDeliveries({
      eventId,
    }: {
      eventId: string;
    }): Promise<{ started: number; alreadyStarted: number }> {
      const event = await findEventById(db, eventId);
      if (!event) throw ApplicationFailure.nonRetryable(`event ${eventId} does not exist`, 'UnknownEvent');
      return startDeliveriesOf(db, startWebhookDelivery, event);
    },
  };
}

export type SessionEventActivities = ReturnType<typeof createSessionEventActivities>;

/**
 * Starts one delivery workflow per enabled endpoint of the event's merchant subscribed to its type (what
 * `startWebhookDeliveries` does once it has read the event): for a caller holding the event row already.
 */
export async function startDeliveriesOf(
  db: Db,
  startWebhookDelivery: WebhookDeliveryStarter,
  event: Pick<EventRow, 'id' | 'merchant_id' | 'type'>,
): Promise<{ started: number; alreadyStarted: number }> {
  const endpoints = await listSubscribedEndpoints(db, event.merchant_id, event.type);
  let started = 0;
  for (const endpoint of endpoints) {
    const outcome = await startWebhookDelivery({ eventId: event.id, endpointId: endpoint.id });
    if (outcome === 'started') started += 1;
  }
  return { started, alreadyStarted: endpoints.length - started };
}
