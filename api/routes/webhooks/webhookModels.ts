import { z } from 'zod';
import { DELIVERY_STATUSES } from '../../../db/webhookDeliveryStatus';
import type { WebhookDeliveryWithAttempts } from '../../../db/webhookDeliveries';
import type { WebhookEndpointRow } from '../../../db/webhooks';
import { WEBHOOK_EVENT_TYPES } from '../../../webhooks/events';
import { invalidField } from '../../httpErrors';
import { webhookUrlProblem, type WebhookUrlPolicy } from '../../../webhooks/webhookUrl';

/**
 * Request and response shapes of webhook endpoints and deliveries (SPEC: Webhook endpoint; docs/decisions.md "Webhooks").
 * Response models are their own types: the endpoint summary has no secret field, so a secret cannot
 * reach a listing by accident; only creation and rotation answer with one.
 */

export const endpointIdParams = z.object({ id: z.string().uuid() });

/** Syntax only here; the scheme and address rules depend on the deployment (see `checkWebhookUrl`). */
const webhookUrl = z
  .string({ error: 'must be an absolute https URL' })
  .trim()
  .min(1, 'must be an absolute https URL');

/** Applies the deployment's URL rules (https, literal addresses); 400 in the validation format otherwise. */
export function checkWebhookUrl(url: string, policy: WebhookUrlPolicy): string {
  const problem = webhookUrlProblem(url, policy);
  if (problem) throw invalidField('url', problem);
  return url;
}

const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `must be one of: ${WEBHOOK_EVENT_TYPES.join(', ')}` }))
  .min(1, 'must name at least one event type')
  .refine((events) => new Set(events).size === events.length, 'must not repeat an event type');

const description = z.string().trim().max(500);

export const createEndpointBody = z
  .object({
    url: webhookUrl,
    events: eventTypes.optional().describe('Defaults to ["session.confirming"]'),
    enabled: z.boolean({ error: 'must be a boolean' }).optional(),
    description: description.optional(),
  })
  .strict()
  .meta({ id: 'WebhookEndpointCreate' });

export const updateEndpointBody = z
  .object({
    url: webhookUrl.optional(),
    events: eventTypes.optional(),
    enabled: z.boolean({ error: 'must be a boolean' }).optional(),
    description: description.nullable().optional(),
  })
  .strict()
  .refine(
    (body) => Object.keys(body).length > 0,
    'must change at least one of url, events, enabled, description',
  )
  .meta({ id: 'WebhookEndpointUpdate' });

const summaryFields = {
  id: z.string().uuid(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  enabled: z.boolean(),
  disabledReason: z
    .enum(['failing'])
    .nullable()
    .describe(
      'failing: disabled by the service after 5 days of failed deliveries; PATCH enabled: true clears it',
    ),
  disabledAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
};

export const endpointSummarySchema = z.object(summaryFields).strict().meta({ id: 'WebhookEndpoint' });
export type EndpointSummary = z.infer<typeof endpointSummarySchema>;

export const endpointWithSecretSchema = z
  .object({ ...summaryFields, secret: z.string().describe('whsec_… signing secret, shown only now') })
  .strict()
  .meta({ id: 'WebhookEndpointWithSecret' });

export const rotatedSecretSchema = z
  .object({
    id: z.string().uuid(),
    secret: z.string().describe('The new whsec_… signing secret, shown only now'),
    previousSecretExpiresAt: z
      .string()
      .nullable()
      .describe(
        'Until then the old secret signs beside the new one (a second v1=); null when it stopped at once',
      ),
  })
  .strict()
  .meta({ id: 'WebhookSecretRotation' });

export function toEndpointSummary(row: WebhookEndpointRow): EndpointSummary {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as EndpointSummary['events'],
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const attemptSchema = z
  .object({
    attemptNumber: z.number().int(),
    attemptedAt: z.string(),
    outcome: z.enum(['succeeded', 'http_error', 'timeout', 'network_error', 'blocked_address']),
    statusCode: z.number().int().nullable(),
    latencyMs: z.number().int(),
    responseBody: z.string().nullable().describe('The first KiB of the answer'),
    error: z.string().nullable(),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

export const deliverySchema = z
  .object({
    id: z.string().uuid(),
    eventId: z.string(),
    eventType: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attemptCount: z.number().int(),
    nextAttemptAt: z.string().nullable().describe('When the next attempt is due; null once none is'),
    resendOf: z.string().uuid().nullable().describe('The delivery this one re-sends; null for the first'),
    createdAt: z.string(),
    updatedAt: z.string(),
    attempts: z.array(attemptSchema),
  })
  .meta({ id: 'WebhookDelivery' });

export function toDelivery(row: WebhookDeliveryWithAttempts): z.infer<typeof deliverySchema> {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
    resendOf: row.resend_of,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    attempts: row.attempts.map((attempt) => ({
      attemptNumber: attempt.attempt_number,
      attemptedAt: attempt.attempted_at.toISOString(),
      outcome: attempt.outcome,
      statusCode: attempt.status_code,
      latencyMs: attempt.latency_ms,
      responseBody: attempt.response_body,
      error: attempt.error,
    })),
  };
}
