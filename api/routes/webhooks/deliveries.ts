import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  findEndpointDelivery,
  listEndpointDeliveries,
  listEventsToRecover,
} from '../../../db/webhookDeliveries';
import type { WebhookEndpointRow } from '../../../db/webhooks';
import { WEBHOOK_RECOVERY_MAX_EVENTS, WEBHOOK_RECOVERY_WINDOW_MS } from '../../../webhooks/deliveryPolicy';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import { startWebhookResend } from '../../../workflowClient/webhookDeliveries';
import type { AppContext } from '../../appContext';
import { invalidField, notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { offsetPageQuery } from '../../routing/pageQuery';
import { deliveryUnavailable, ENDPOINT_OPERATION_RESPONSES, endpointOperations } from './endpointOperations';
import { WEBHOOK_ROUTE_SETS, WEBHOOKS_TAG, type WebhookRouteSet } from './routeSets';
import { DELIVERY_STATUSES } from '../../../db/webhookDeliveryStatus';
import { deliverySchema, endpointIdParams, toDelivery } from './webhookModels';

/**
 * Under `/v1/merchants/me/webhooks` (JWT) and `/v1/webhooks` (SK), identical shapes:
 * | GET  | /{id}/deliveries                       | 200 deliveries with their attempts; query limit, page, status |
 * | POST | /{id}/deliveries/{deliveryId}/resend   | 202 `{ deliveryId }`: a new delivery of the same event |
 * | POST | /{id}/recover `{ since }`              | 202 `{ queued }`: a new delivery of each event that failed since then |
 *
 * One item per delivery (an event sent to this endpoint by one workflow run) with its attempts.
 * Resends, recoveries and test events share a budget per endpoint and UTC hour (docs/decisions.md "Webhook delivery operations").
 */
const listQuery = z.object({
  ...offsetPageQuery,
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of: ${DELIVERY_STATUSES.join(', ')}` }).optional(),
});

const deliveryParams = z.object({ id: z.string().uuid(), deliveryId: z.string().uuid() });

const recoverBody = z
  .object({
    since: z.iso
      .datetime({ offset: true, error: 'must be an ISO 8601 timestamp' })
      .describe('Recover events whose deliveries failed since then; at most 14 days back'),
  })
  .strict()
  .meta({ id: 'WebhookRecoveryRequest' });

function deliveryRoutesFor(app: AppContext, { base, auth, audience, label }: WebhookRouteSet): AnyRoute[] {
  const { endpointOf, takeOperation } = endpointOperations(app);

  const resend = async (endpoint: WebhookEndpointRow, eventId: string, resendOf: string) => {
    const deliveryId = randomUUID();
    try {
      await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
        startWebhookResend(app.temporal, {
          eventId,
          endpointId: endpoint.id,
          taskQueue: app.taskQueues.webhooks,
          deliveryId,
          resendOf,
        }),
      );
    } catch (error) {
      app.logger.error(
        { err: error, endpointId: endpoint.id, eventId },
        'webhook resend could not reach Temporal',
      );
      throw deliveryUnavailable('Webhook resend');
    }
    return deliveryId;
  };

  return [
    defineRoute({
      method: 'get',
      path: `${base}/:id/deliveries`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Deliveries to one endpoint, newest first: event id and type, status, every attempt (time, HTTP status, duration, first KiB of the answer, error) and the next attempt's time (${label})`,
      params: endpointIdParams,
      query: listQuery,
      responses: {
        200: {
          description: 'Page of deliveries',
          schema: z.object({
            data: z.array(deliverySchema),
            page: z.number(),
            limit: z.number(),
            total: z.number(),
          }),
        },
        400: { description: 'Bad limit, page or status' },
        404: { description: 'Unknown or foreign endpoint' },
      },
      async handler({ merchantId, params, query }) {
        const endpoint = await endpointOf(merchantId, params.id);
        const { rows, total } = await listEndpointDeliveries(app.db, {
          merchantId,
          endpointId: endpoint.id,
          ...query,
        });
        return {
          status: 200,
          body: { data: rows.map(toDelivery), page: query.page, limit: query.limit, total },
        };
      },
    }),

    defineRoute({
      method: 'post',
      path: `${base}/:id/deliveries/:deliveryId/resend`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Send a delivery's event again (same evt_ id, fresh signature) as a new delivery with the full retry schedule (${label})`,
      params: deliveryParams,
      responses: {
        202: {
          description: 'Accepted: the new delivery',
          schema: z.object({ deliveryId: z.string().uuid() }).meta({ id: 'WebhookResend' }),
        },
        ...ENDPOINT_OPERATION_RESPONSES,
        404: { description: 'Unknown or foreign endpoint or delivery' },
      },
      async handler({ merchantId, params }) {
        const endpoint = await endpointOf(merchantId, params.id);
        const delivery = await findEndpointDelivery(app.db, {
          merchantId,
          endpointId: endpoint.id,
          deliveryId: params.deliveryId,
        });
        if (!delivery) throw notFound('Webhook delivery not found');
        await takeOperation(endpoint);
        const deliveryId = await resend(endpoint, delivery.event_id, delivery.id);
        return { status: 202, body: { deliveryId } };
      },
    }),

    defineRoute({
      method: 'post',
      path: `${base}/:id/recover`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Send again every event whose deliveries to this endpoint all failed since a time, at most 14 days back (${label})`,
      params: endpointIdParams,
      body: recoverBody,
      responses: {
        202: {
          description: 'Accepted: how many events were queued again',
          schema: z.object({ queued: z.number().int() }).meta({ id: 'WebhookRecovery' }),
        },
        400: { description: 'since missing, malformed, in the future or more than 14 days back' },
        ...ENDPOINT_OPERATION_RESPONSES,
      },
      async handler({ merchantId, params, body }) {
        const since = new Date(body.since);
        const now = app.now();
        if (since.getTime() > now.getTime()) throw invalidField('since', 'must not be in the future');
        if (since.getTime() < now.getTime() - WEBHOOK_RECOVERY_WINDOW_MS)
          throw invalidField('since', 'must be at most 14 days back');
        const endpoint = await endpointOf(merchantId, params.id);
        await takeOperation(endpoint);
        const events = await listEventsToRecover(app.db, {
          merchantId,
          endpointId: endpoint.id,
          since,
          limit: WEBHOOK_RECOVERY_MAX_EVENTS,
        });
        for (const { eventId, latestDeliveryId } of events) await resend(endpoint, eventId, latestDeliveryId);
        return { status: 202, body: { queued: events.length } };
      },
    }),
  ];
}

export function webhookDeliveryRoutes(app: AppContext): AnyRoute[] {
  return WEBHOOK_ROUTE_SETS.flatMap((set) => deliveryRoutesFor(app, set));
}
