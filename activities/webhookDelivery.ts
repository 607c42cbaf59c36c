import { cancellationSignal } from '@temporalio/activity';
import type { Db } from '../db/client';
import { findEventById, type EventRow } from '../db/events';
import { findMerchantById } from '../db/merchants';
import {
  finishWebhookDelivery,
  openWebhookDelivery,
  recordWebhookAttempt,
  type RecordedAttempt,
} from '../db/webhookDeliveries';
import { findWebhookEndpointById, listSubscribedEndpoints, type WebhookEndpointRow } from '../db/webhooks';
import type { Mailer } from '../mail/mailer';
import { endpointDisabledMail } from '../webhooks/endpointDisabledMail';
import { ENDPOINT_DISABLING } from '../webhooks/endpointDisabling';
import { ENDPOINT_TEST_EVENT_TYPE } from '../db/events';
import {
  WEBHOOK_ATTEMPT_TIMEOUT_MS,
  WEBHOOK_RESPONSE_BODY_LIMIT_BYTES,
  WEBHOOK_RETRY_DELAYS_MS,
} from '../webhooks/deliveryPolicy';
import { sendWebhook, type WebhookSendResult } from '../webhooks/sendWebhook';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhookPayload } from '../webhooks/signWebhookPayload';
import type { WebhookSecretBox } from '../webhooks/webhookSecrets';
import { tracedHttpCall } from '../tracing/outboundCalls';

/** Activities of the delivery workflow: the HTTP attempt and the records around it. */
export interface WebhookDeliveryActivityDependencies {
  db: Db;
  /** Decrypts endpoint secrets (WEBHOOK_SECRET_ENCRYPTION_KEY). */
  secrets: WebhookSecretBox;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets: boolean;
  /** Tells the merchant's verified e-mail that an endpoint was disabled; without it no mail is sent. */
  mailer?: Pick<Mailer, 'send'>;
}

/** What one attempt came to: sent (whatever the answer), or not sent because the endpoint is disabled or gone. */
export type AttemptReport =
  | { kind: 'sent'; result: WebhookSendResult }
  | { kind: 'endpoint_unavailable'; reason: 'deleted' | 'disabled' | 'unsubscribed' };

/** What the first attempt, made in the same activity as the delivery record, came to. */
export type FirstAttempt =
  | { kind: 'endpoint_gone' }
  | {
      kind: 'attempted';
      deliveryId: string;
      attemptedAt: string;
      report: AttemptReport;
      /** False when recording the attempt failed (the workflow records it with its retried activity). */
      recorded: boolean;
      /** Set when this attempt's failure disabled the endpoint (see recordWebhookAttempt). */
      disabledEventId?: string | null;
    };

/** What a delivery record is opened with: the pair, the workflow run, and for a resend its chosen id. */
export interface DeliveryRecordInput {
  eventId: string;
  endpointId: string;
  workflowId: string;
  workflowRunId: string;
  deliveryId?: string;
  resendOf?: string;
}

/** The first attempt's record input: the workflow's time of the attempt (histories before it: the activity's clock). */
export interface FirstAttemptInput extends DeliveryRecordInput {
  attemptedAt?: string;
}

/**
 * The delivery workflow's activities, each a named function below over the same dependencies: the
 * first attempt with its record, the record, one attempt, its record, the disabled-endpoint notice
 * and the delivery's end.
 */
export function createWebhookDeliveryActivities(deps: WebhookDeliveryActivityDependencies) {
  const { db } = deps;
  return {
    openAndAttemptFirst: (input: FirstAttemptInput): Promise<FirstAttempt> =>
      openAndAttemptFirst(deps, input),

    /** The delivery record of this workflow run (created once per run); null when the endpoint is gone. */
    async openDelivery(input: DeliveryRecordInput): Promise<{ deliveryId: string } | null> {
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
      return sendOnce(deps, endpoint, event);
    },

    /**
     * Records one attempt (idempotent per attempt number); a 2xx also marks the session
     * webhookDelivered, and a failure that ends 5 days of failures disables the endpoint.
     */
    async recordAttempt(
      attempt: {
        deliveryId: string;
        attemptNumber: number;
        attemptedAt: string;
        nextAttemptAt: string | null;
      } & WebhookSendResult,
    ): Promise<RecordedAttempt> {
      return recordWebhookAttempt(
        db,
        {
          ...attempt,
          attemptedAt: new Date(attempt.attemptedAt),
          nextAttemptAt: attempt.nextAttemptAt ? new Date(attempt.nextAttemptAt) : null,
        },
        ENDPOINT_DISABLING,
      );
    },

    announceEndpointDisabled: (input: {
      eventId: string;
    }): Promise<{ endpointIds: string[]; mailed: boolean }> => announceEndpointDisabled(deps, input),

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

/** An endpoint receives the types it lists, and the test events asked for it (and no other endpoint's). */
function receives(endpoint: WebhookEndpointRow, event: EventRow): boolean {
  return event.type === ENDPOINT_TEST_EVENT_TYPE
    ? event.endpoint_id === endpoint.id
    : endpoint.events.includes(event.type);
}

/**
 * Signs the stored payload with the endpoint's current secret (and the previous one while a
 * rotation overlaps) and the current time, and POSTs it once.
 */
async function sendOnce(
  { secrets, allowPrivateTargets }: WebhookDeliveryActivityDependencies,
  endpoint: WebhookEndpointRow | undefined,
  event: EventRow | undefined,
): Promise<AttemptReport> {
  if (!endpoint || !event) return { kind: 'endpoint_unavailable', reason: 'deleted' };
  if (!endpoint.enabled) return { kind: 'endpoint_unavailable', reason: 'disabled' };
  if (!receives(endpoint, event)) return { kind: 'endpoint_unavailable', reason: 'unsubscribed' };
  const secret = secrets.open(endpoint.secret_ciphertext, endpoint.id);
  const overlapping =
    endpoint.previous_secret_ciphertext !== null &&
    endpoint.previous_secret_expires_at !== null &&
    endpoint.previous_secret_expires_at.getTime() > Date.now();
  const previousSecret = overlapping ? secrets.open(endpoint.previous_secret_ciphertext!, endpoint.id) : null;
  const { header } = signWebhookPayload({ rawBody: event.payload, secret, previousSecret });
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
}

/**
 * The common case in one activity (one task instead of three): opens the run's delivery record,
 * makes attempt 1 and records it. Never retried (it sends): a database failure before the send
 * throws with nothing sent, and the workflow takes the step-by-step path; one after the send
 * returns `recorded: false` and the workflow records the attempt with its retried activity.
 */
async function openAndAttemptFirst(
  deps: WebhookDeliveryActivityDependencies,
  { attemptedAt: scheduledAt, ...input }: FirstAttemptInput,
): Promise<FirstAttempt> {
  const { db } = deps;
  const [endpoint, event] = await Promise.all([
    findWebhookEndpointById(db, input.endpointId),
    findEventById(db, input.eventId),
  ]);
  if (!endpoint) return { kind: 'endpoint_gone' };
  const delivery = await openWebhookDelivery(db, { ...input, merchantId: endpoint.merchant_id });
  if (!delivery) return { kind: 'endpoint_gone' };
  const attemptedAt = scheduledAt ? new Date(scheduledAt) : new Date();
  const report = await sendOnce(deps, endpoint, event);
  if (report.kind !== 'sent')
    return {
      kind: 'attempted',
      deliveryId: delivery.id,
      attemptedAt: attemptedAt.toISOString(),
      report,
      recorded: true,
    };
  const succeeded = report.result.outcome === 'succeeded';
  const firstPauseMs = WEBHOOK_RETRY_DELAYS_MS[0];
  let recorded: RecordedAttempt = { recorded: false, disabledEventId: null };
  try {
    recorded = await recordWebhookAttempt(
      db,
      {
        deliveryId: delivery.id,
        attemptNumber: 1,
        attemptedAt,
        ...report.result,
        nextAttemptAt:
          succeeded || firstPauseMs === undefined ? null : new Date(attemptedAt.getTime() + firstPauseMs),
      },
      ENDPOINT_DISABLING,
    );
  } catch {
    // Not recorded: the workflow records the attempt with its retried activity.
  }
  return {
    kind: 'attempted',
    deliveryId: delivery.id,
    attemptedAt: attemptedAt.toISOString(),
    report,
    recorded: recorded.recorded,
    disabledEventId: recorded.disabledEventId,
  };
}

/**
 * Announces an endpoint the service disabled (docs/operations.md "A webhook endpoint disabled for failing"): mails the merchant's verified e-mail
 * (at least once: a retried activity may send again) and answers the merchant's enabled endpoints
 * that list `endpoint.disabled`, which the workflow then delivers the event to.
 */
async function announceEndpointDisabled(
  { db, mailer }: WebhookDeliveryActivityDependencies,
  { eventId }: { eventId: string },
): Promise<{ endpointIds: string[]; mailed: boolean }> {
  const event = await findEventById(db, eventId);
  if (!event) return { endpointIds: [], mailed: false };
  const endpoints = await listSubscribedEndpoints(db, event.merchant_id, event.type);
  const merchant = await findMerchantById(db, event.merchant_id);
  const payload = JSON.parse(event.payload) as {
    data: { endpoint: { id: string; url: string; disabledAt: string } };
  };
  const mailed =
    mailer !== undefined &&
    merchant?.email != null &&
    merchant.email_verified_at !== null &&
    (await mailer.send(endpointDisabledMail({ to: merchant.email, endpoint: payload.data.endpoint })));
  return { endpointIds: endpoints.map((endpoint) => endpoint.id), mailed };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
