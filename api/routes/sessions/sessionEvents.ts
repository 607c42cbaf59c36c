import { z } from 'zod';
import { findMerchantSession } from '../../../db/sessions';
import {
  listSessionEventsWithDeliveries,
  SESSION_EVENT_DELIVERIES_SHOWN,
  type EventDelivery,
} from '../../../db/webhookDeliveries';
import type { AppContext } from '../../appContext';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { deliverySchema, toDelivery } from '../webhooks/webhookModels';
import { sessionIdParams, sessionNotFound } from './sessions';

/**
 * | GET | /v1/merchants/me/sessions/{id}/events | 200 `{ data }`: the session's events with their webhook deliveries; 404 foreign |
 *
 * What links a delivery to its session (a delivery names only its event): the session page's timeline
 * shows each event and where it was delivered without matching deliveries by type and time.
 */
const eventDeliverySchema = deliverySchema
  .extend({
    endpointId: z.string().uuid(),
    endpointUrl: z.string(),
  })
  .meta({ id: 'SessionEventDelivery' });

const sessionEventSchema = z
  .object({
    id: z.string().describe('evt_… id, as sent in the webhook body and `X-Service-Event-Id`'),
    type: z.string().describe('session.confirming, session.completed, …'),
    createdAt: z.string(),
    deliveryCount: z.number().int().describe('Every delivery of the event, also those not listed'),
    deliveries: z
      .array(eventDeliverySchema)
      .describe(
        `Newest first, at most ${SESSION_EVENT_DELIVERIES_SHOWN}; the endpoint's deliveries list has them all`,
      ),
  })
  .meta({ id: 'SessionEvent' });

function toEventDelivery(row: EventDelivery): z.infer<typeof eventDeliverySchema> {
  return { ...toDelivery(row), endpointId: row.endpoint_id, endpointUrl: row.endpoint_url };
}

export function sessionEventsRoute(app: AppContext): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/v1/merchants/me/sessions/:id/events',
    auth: 'jwt',
    tag: 'Payment sessions',
    audience: 'dashboard',
    summary: 'The session’s events, oldest first, each with its webhook deliveries and their attempts',
    params: sessionIdParams,
    responses: {
      200: {
        description: 'The session’s events',
        schema: z.object({ data: z.array(sessionEventSchema) }),
      },
      404: { description: 'Unknown or foreign session' },
    },
    async handler({ merchantId, params }) {
      const session = await findMerchantSession(app.db, merchantId, params.id);
      if (!session) throw sessionNotFound();
      const events = await listSessionEventsWithDeliveries(app.db, { merchantId, sessionId: session.id });
      return {
        status: 200,
        body: {
          data: events.map((event) => ({
            id: event.id,
            type: event.type,
            createdAt: event.created_at.toISOString(),
            deliveryCount: event.delivery_count,
            deliveries: event.deliveries.map(toEventDelivery),
          })),
        },
      };
    },
  });
}
