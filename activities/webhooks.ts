import { randomUUID } from 'node:crypto';
import { ApplicationFailure, cancellationSignal } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { normaliseDecimal } from '../api/routes/sessions/sessionModels';
import type { Db } from '../db/client';
import { findEventById, insertSessionEventOnce } from '../db/events';
import { findSessionById } from '../db/sessions';
import { finishWebhookDelivery, openWebhookDelivery, recordWebhookAttempt } from '../db/webhookDeliveries';
import { findWebhookEndpointById, listSubscribedEndpoints } from '../db/webhooks';
import { startWebhookDelivery } from '../webhooks/deliveryWorkflows';
import { WEBHOOK_ATTEMPT_TIMEOUT_MS, WEBHOOK_RESPONSE_BODY_LIMIT_BYTES } from '../webhooks/deliveryPolicy';
import { newEventId, serialiseSessionConfirmingEvent } from '../webhooks/events';
import { sendWebhook, type WebhookSendResult } from '../webhooks/sendWebhook';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhookPayload } from '../webhooks/signWebhookPayload';
import type { WebhookSecretBox } from '../webhooks/webhookSecrets';
import { tracedHttpCall } from '../tracing/outboundCalls';

/** Activities the payment-session workflow calls when a session becomes `confirming`. */
export interface SessionEventActivityDependencies {
  db: Db;
  /** Starts the delivery workflows. */
  temporal: Client;
  /** The deployment's webhook task queue (TEMPORAL_TASK_QUEUE_PREFIX applied). */
  webhookTaskQueue: string;
}

export interface RecordedEvent {
  id: string;
  type: string;
}

export function createSessionEventActivities({
  db,
  temporal,
  webhookTaskQueue,
}: SessionEventActivityDependencies) {
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
      const endpoints = await listSubscribedEndpoints(db, event.merchant_id, event.type);
      let started = 0;
      for (const endpoint of endpoints) {
        const outcome = await startWebhookDelivery(temporal, {
          eventId,
          endpointId: endpoint.id,
          taskQueue: webhookTaskQueue,
        });
        if (outcome === 'started') started += 1;
      }
      return { started, alreadyStarted: endpoints.length - started };
    },
  };
}

export type SessionEventActivities = ReturnType<typeof createSessionEventActivities>;

/** Activities of the delivery workflow: the HTTP attempt and the records around it. */
export interface WebhookDeliveryActivityDependencies {
  db: Db;
  /** Decrypts endpoint secrets (WEBHOOK_SECRET_ENCRYPTION_KEY). */
  secrets: WebhookSecretBox;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets: boolean;
}

/** What one attempt came to: sent (whatever the answer), or not sent because the endpoint is disabled or gone. */
export type AttemptReport =
  | { kind: 'sent'; result: WebhookSendResult }
  | { kind: 'endpoint_unavailable'; reason: 'deleted' | 'disabled' | 'unsubscribed' };

export function createWebhookDeliveryActivities({
  db,
  secrets,
  allowPrivateTargets,
}: WebhookDeliveryActivityDependencies) {
  return {
    /** The delivery record of this workflow run (created once per run); null when the endpoint is gone. */
    async openDelivery(input: {
      eventId: string;
      endpointId: string;
      workflowId: string;
      workflowRunId: string;
    }): Promise<{ deliveryId: string } | null> {
      const endpoint = await findWebhookEndpointById(db, input.endpointId);
      if (!endpoint) return null;
      const delivery = await openWebhookDelivery(db, { ...input, merchantId: endpoint.merchant_id });
      return delivery ? { deliveryId: delivery.id } : null;
    },

    /**
     * Re-reads the endpoint (a disabled or deleted one is not sent to), signs the stored payload
     * with the endpoint's current secret and the current time, and POSTs it once.
     */
    async sendWebhookAttempt({
      eventId,
      endpointId,
    }: {
      eventId: string;
      endpointId: string;
    }): Promise<AttemptReport> {
      const [endpoint, event] = await Promise.all([
        findWebhookEndpointById(db, endpointId),
        findEventById(db, eventId),
      ]);
      if (!endpoint || !event) return { kind: 'endpoint_unavailable', reason: 'deleted' };
      if (!endpoint.enabled) return { kind: 'endpoint_unavailable', reason: 'disabled' };
      if (!endpoint.events.includes(event.type))
        return { kind: 'endpoint_unavailable', reason: 'unsubscribed' };
      const secret = secrets.open(endpoint.secret_ciphertext, endpoint.id);
      const { header } = signWebhookPayload({ rawBody: event.payload, secret });
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'stablepay-webhooks/1',
        [SIGNATURE_HEADER]: header,
        [EVENT_ID_HEADER]: event.id,
      };
      const result = await tracedHttpCall({ method: 'POST', url: endpoint.url, headers }, (traced) =>
        sendWebhook({
          url: endpoint.url,
          rawBody: event.payload,
          headers: traced,
          allowPrivateTargets,
          timeoutMs: WEBHOOK_ATTEMPT_TIMEOUT_MS,
          responseBodyLimitBytes: WEBHOOK_RESPONSE_BODY_LIMIT_BYTES,
          signal: cancellationSignal(),
        }),
      );
      return { kind: 'sent', result };
    },

    /** Records one attempt (idempotent per attempt number); a 2xx also marks the session webhookDelivered. */
    async recordAttempt(
      attempt: {
        deliveryId: string;
        attemptNumber: number;
        attemptedAt: string;
        nextAttemptAt: string | null;
      } & WebhookSendResult,
    ): Promise<boolean> {
      return recordWebhookAttempt(db, {
        ...attempt,
        attemptedAt: new Date(attempt.attemptedAt),
        nextAttemptAt: attempt.nextAttemptAt ? new Date(attempt.nextAttemptAt) : null,
      });
    },

    async finishDelivery({
      deliveryId,
      status,
    }: {
      deliveryId: string;
      status: 'failed' | 'canceled';
    }): Promise<void> {
      await finishWebhookDelivery(db, deliveryId, status);
    },
  };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
