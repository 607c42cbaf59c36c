import type { z } from 'zod';
import { EVENT_ID_HEADER, SIGNATURE_HEADER } from '../../webhooks/signWebhookPayload';
import { WEBHOOK_EVENT_SCHEMAS } from '../../webhooks/eventSchemas';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/eventTypes';

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, each a POST the service sends to the
 * merchant's endpoint with the signature headers and the event body (webhooks/eventSchemas.ts).
 */
type Json = Record<string, unknown>;

const SIGNATURE_DESCRIPTION =
  '`t=<unix seconds>,v1=<hex HMAC-SHA256>`: the HMAC is over `<t>.<raw body>` keyed by the endpoint’s `whsec_` ' +
  'secret. During a secret rotation’s overlap a second `v1=` follows, signed with the previous secret: accept ' +
  'the request when any `v1` matches. Compare in constant time over the raw bytes and reject a `t` more than ' +
  'about 300 seconds from your clock.';

const operationIdOf = (type: string) =>
  `on${type
    .split(/[._]/)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')}`;

/** Who gets the type: the endpoints that list it, or (a test event) the one endpoint it was asked for. */
const deliveredTo = (type: string) =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)
    ? `Delivered only to endpoints whose \`events\` list \`${type}\``
    : 'Delivered only to the endpoint it was asked for';

/** `toComponent` registers a schema under a component name and returns its `$ref`. */
export function webhooksSection(
  toComponent: (name: string, schema: z.ZodType) => Json,
): Record<string, Json> {
  return Object.fromEntries(
    WEBHOOK_EVENT_SCHEMAS.map(({ type, name, schema }) => [
      type,
      {
        post: {
          operationId: operationIdOf(type),
          summary: `The \`${type}\` event`,
          description: `${schema.description ?? ''} ${deliveredTo(type)}; at least once, so drop repeats by \`id\`.`,
          tags: ['Events'],
          parameters: [
            {
              name: SIGNATURE_HEADER,
              in: 'header',
              required: true,
              description: SIGNATURE_DESCRIPTION,
              schema: { type: 'string' },
            },
            {
              name: EVENT_ID_HEADER,
              in: 'header',
              required: true,
              description: 'The event’s `evt_` id, the same on every delivery of it',
              schema: { type: 'string' },
            },
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: toComponent(name, schema) } },
          },
          responses: {
            '200': {
              description:
                'Any 2xx acknowledges the delivery. Anything else (or no answer within the timeout) is retried after 1 minute, 5 minutes, 30 minutes and 2 hours.',
            },
          },
          security: [],
        },
      },
    ]),
  );
}
