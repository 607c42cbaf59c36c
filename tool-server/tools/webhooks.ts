import { z } from 'zod';
import { DELIVERY_STATUSES } from '../../db/webhookDeliveryStatus';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events';
import { accountName, describeChanges } from '../personConfirmation';
import { type AnyToolDefinition, routeTool, segment, without } from '../toolDefinition';
import { PAGE_SIZES, pageSizeText } from '../../config/pageSizes';

/**
 * Endpoints are managed with the sk_ key (SPEC: webhooks with the API key), deliveries read with the
 * session token. Creating, redirecting (url, events, enabled) and re-keying an endpoint need the
 * person's confirmation (security review III, finding 6): the endpoint receives the merchant's events.
 * | list_webhooks           | GET    /v1/webhooks                                    | SK  |
 * | create_webhook          | POST   /v1/webhooks                                    | SK  |
 * | get_webhook             | GET    /v1/webhooks/{id}                               | SK  |
 * | update_webhook          | PATCH  /v1/webhooks/{id}                               | SK  |
 * | delete_webhook          | DELETE /v1/webhooks/{id}                               | SK  |
 * | rotate_webhook_secret      | POST   /v1/webhooks/{id}/rotate-secret                  | SK  |
 * | list_webhook_deliveries    | GET    /v1/merchants/me/webhooks/{webhookId}/deliveries | JWT |
 * | resend_webhook_delivery    | POST   /v1/webhooks/{webhookId}/deliveries/{deliveryId}/resend | SK |
 * | recover_webhook_deliveries | POST   /v1/webhooks/{webhookId}/recover                 | SK  |
 * | send_webhook_test_event    | POST   /v1/webhooks/{webhookId}/send-test-event         | SK  |
 */
const events = z
  .array(z.string())
  .describe(
    `event types: ${WEBHOOK_EVENT_TYPES.map((type) => `"${type}"`).join(', ')} (default: "session.confirming")`,
  );
const endpointPath = ({ id }: { id: string }) => `/v1/webhooks/${segment(id)}`;

export const webhookTools: AnyToolDefinition[] = [
  routeTool({
    name: 'list_webhooks',
    description: 'List the webhook endpoints (needs the sk_ API key).',
    inputSchema: {},
    auth: 'sk',
    method: 'GET',
    path: '/v1/webhooks',
  }),

  routeTool({
    name: 'create_webhook',
    description:
      'Add a webhook endpoint (at most 5; needs the person’s confirmation). The whsec_ signing secret is returned this once.',
    inputSchema: {
      url: z.string().describe('absolute https URL'),
      events: events.optional(),
      enabled: z.boolean().optional(),
      description: z.string().optional(),
    },
    auth: 'sk',
    method: 'POST',
    path: '/v1/webhooks',
    body: (input) => input,
    confirmation: async ({ url, events, enabled }, { credentials }) =>
      `Add the webhook endpoint ${url} to ${await accountName(credentials)}${events === undefined ? '' : ` for ${events.join(', ')}`}${enabled === false ? ' (disabled)' : ''}: the merchant’s session events (ids, amounts, statuses) are sent there, signed with a new secret`,
  }),

  routeTool({
    name: 'get_webhook',
    description: 'Read one webhook endpoint.',
    inputSchema: { id: z.string() },
    auth: 'sk',
    method: 'GET',
    path: endpointPath,
  }),

  routeTool({
    name: 'update_webhook',
    description:
      'Change a webhook endpoint’s url, events, enabled flag or description (anything but the description needs the person’s confirmation).',
    inputSchema: {
      id: z.string(),
      url: z.string().optional(),
      events: events.optional(),
      enabled: z.boolean().optional(),
      description: z.string().nullable().optional(),
    },
    auth: 'sk',
    method: 'PATCH',
    path: endpointPath,
    body: (input) => without(input, 'id'),
    // A description is the merchant's own note; the rest decides where the events go.
    confirmation: async ({ id, url, events, enabled }, { credentials }) => {
      const described = describeChanges({ url, events, enabled });
      return described && `Change webhook endpoint ${id} of ${await accountName(credentials)}: ${described}`;
    },
  }),

  routeTool({
    name: 'delete_webhook',
    description: 'Delete a webhook endpoint and its delivery history.',
    inputSchema: { id: z.string() },
    auth: 'sk',
    method: 'DELETE',
    path: endpointPath,
    emptyResult: ({ id }) => ({ id, deleted: true }),
    annotations: { destructiveHint: true },
  }),

  routeTool({
    name: 'rotate_webhook_secret',
    description:
      'Issue a new whsec_ signing secret for an endpoint (returned this once; needs the person’s confirmation). The old one keeps signing beside it for overlapSeconds (default a day), so the receiver can switch without losing a delivery.',
    inputSchema: {
      id: z.string(),
      overlapSeconds: z
        .number()
        .int()
        .optional()
        .describe('0 to 604800; how long the old secret still signs; 0 stops it at once'),
    },
    auth: 'sk',
    method: 'POST',
    path: ({ id }) => `${endpointPath({ id })}/rotate-secret`,
    body: (input) => without(input, 'id'),
    confirmation: async ({ id, overlapSeconds }, { credentials }) =>
      `Issue a new signing secret for webhook endpoint ${id} of ${await accountName(credentials)}; whoever holds it can sign events the receiver trusts, and the old one stops signing after ${overlapSeconds ?? 86_400} s`,
  }),

  routeTool({
    name: 'list_webhook_deliveries',
    description: 'List an endpoint’s deliveries, newest first, each with its attempts.',
    inputSchema: {
      webhookId: z.string(),
      limit: z.number().int().optional().describe(pageSizeText(PAGE_SIZES.standard)),
      page: z.number().int().optional(),
      status: z.enum(DELIVERY_STATUSES).optional(),
    },
    auth: 'jwt',
    method: 'GET',
    path: ({ webhookId }) => `/v1/merchants/me/webhooks/${segment(webhookId)}/deliveries`,
    query: (input) => without(input, 'webhookId'),
    untrusted: [
      {
        paths: ['data.*.attempts.*.responseBody', 'data.*.attempts.*.error'],
        origin: 'the server answering at the endpoint URL',
      },
    ],
  }),

  routeTool({
    name: 'resend_webhook_delivery',
    description:
      'Send one delivery’s event again (same evt_ id, fresh signature) as a new delivery with the full retry schedule (needs the sk_ API key).',
    inputSchema: { webhookId: z.string(), deliveryId: z.string() },
    auth: 'sk',
    method: 'POST',
    path: ({ webhookId, deliveryId }) =>
      `${endpointPath({ id: webhookId })}/deliveries/${segment(deliveryId)}/resend`,
  }),

  routeTool({
    name: 'send_webhook_test_event',
    description:
      'Send the endpoint a signed endpoint.test event with a fixed body, whatever event types it lists, to try the receiver; it is delivered and recorded like any event and never counts toward disabling the endpoint (needs the sk_ API key).',
    inputSchema: { webhookId: z.string() },
    auth: 'sk',
    method: 'POST',
    path: ({ webhookId }) => `${endpointPath({ id: webhookId })}/send-test-event`,
  }),

  routeTool({
    name: 'recover_webhook_deliveries',
    description:
      'Send again every event whose deliveries to the endpoint all failed since a time, at most 14 days back (needs the sk_ API key).',
    inputSchema: { webhookId: z.string(), since: z.string().describe('ISO 8601 timestamp') },
    auth: 'sk',
    method: 'POST',
    path: ({ webhookId }) => `${endpointPath({ id: webhookId })}/recover`,
    body: (input) => without(input, 'webhookId'),
  }),
];
