import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { deleteEndpointTestEvent, insertEndpointTestEvent } from '../../../db/events';
import { ENDPOINT_TEST_MESSAGE, newEventId, serialiseEndpointTestEvent } from '../../../webhooks/events';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import { startWebhookDelivery } from '../../../workflowClient/webhookDeliveries';
import type { AppContext } from '../../appContext';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { deliveryUnavailable, ENDPOINT_OPERATION_RESPONSES, endpointOperations } from './endpointOperations';
import { WEBHOOK_ROUTE_SETS, WEBHOOKS_TAG } from './routeSets';
import { endpointIdParams } from './webhookModels';

/**
 * Under `/v1/merchants/me/webhooks` (JWT) and `/v1/webhooks` (SK):
 * | POST | /{id}/send-test-event | 202 `{ eventId, deliveryId }` |
 *
 * A signed `endpoint.test` event with a fixed body goes to this endpoint only, through the same
 * delivery workflow as every event (attempts recorded, the full retry schedule), listed among its
 * deliveries. Its attempts never count toward disabling the endpoint. It takes one of the endpoint's
 * hourly operations, like a resend.
 */
const testEventAccepted = z
  .object({
    eventId: z.string().describe('The `evt_` id of the test event (also in `X-Service-Event-Id`)'),
    deliveryId: z.string().uuid().describe('Its delivery, listed under the endpoint’s deliveries'),
  })
  .meta({ id: 'WebhookTestEvent' });

export function webhookTestEventRoutes(app: AppContext): AnyRoute[] {
  const { endpointOf, takeOperation } = endpointOperations(app);
  return WEBHOOK_ROUTE_SETS.map(({ base, auth, audience, label }) =>
    defineRoute({
      method: 'post',
      path: `${base}/:id/send-test-event`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Send the endpoint a signed endpoint.test event with a fixed body, delivered and recorded like any event; never counted toward disabling it (${label})`,
      params: endpointIdParams,
      responses: {
        202: { description: 'Accepted: the test event and its delivery', schema: testEventAccepted },
        ...ENDPOINT_OPERATION_RESPONSES,
      },
      async handler({ merchantId, params }) {
        const endpoint = await endpointOf(merchantId, params.id);
        await takeOperation(endpoint);
        const createdAt = app.now();
        const eventId = newEventId(randomUUID());
        await insertEndpointTestEvent(app.db, {
          id: eventId,
          merchantId,
          endpointId: endpoint.id,
          createdAt,
          payload: serialiseEndpointTestEvent({
            id: eventId,
            type: 'endpoint.test',
            createdAt: createdAt.toISOString(),
            data: { endpoint: { id: endpoint.id, url: endpoint.url }, message: ENDPOINT_TEST_MESSAGE },
          }),
        });
        const deliveryId = randomUUID();
        try {
          await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
            startWebhookDelivery(app.temporal, {
              eventId,
              endpointId: endpoint.id,
              taskQueue: app.taskQueues.webhooks,
              deliveryId,
            }),
          );
        } catch (error) {
          app.logger.error(
            { err: error, endpointId: endpoint.id, eventId },
            'webhook test event could not reach Temporal',
          );
          // A start that did reach Temporal finds no event and ends without a delivery.
          await deleteEndpointTestEvent(app.db, eventId);
          throw deliveryUnavailable('Sending a test event');
        }
        return { status: 202, body: { eventId, deliveryId } };
      },
    }),
  );
}
