import { z } from 'zod';
import { listEndpointDeliveries } from '../../../db/webhookDeliveries';
import { findMerchantWebhookEndpoint } from '../../../db/webhooks';
import type { AppContext } from '../../appContext';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { pageQuery } from '../sessions/dashboardSessions';
import { webhookEndpointNotFound } from './endpoints';
import { WEBHOOKS_TAG } from './routeSets';
import { DELIVERY_STATUSES, deliverySchema, endpointIdParams, toDelivery } from './webhookModels';

/**
 * | GET | /v1/merchants/me/webhooks/{id}/deliveries | JWT | 200 list of delivery attempts; query limit, page, status |
 *
 * One item per delivery (an event sent to this endpoint by one workflow run) with its attempts.
 */
const listQuery = z.object({
  ...pageQuery,
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of: ${DELIVERY_STATUSES.join(', ')}` }).optional(),
});

export function webhookDeliveryRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/webhooks/:id/deliveries',
      auth: 'jwt',
      tag: WEBHOOKS_TAG,
      audience: 'dashboard',
      summary:
        'Deliveries to one endpoint, newest first, each with every attempt (status code, latency, first KiB of the answer, error)',
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
        const endpoint = await findMerchantWebhookEndpoint(app.db, merchantId, params.id);
        if (!endpoint) throw webhookEndpointNotFound();
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
  ];
}
