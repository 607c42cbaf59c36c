import { z } from 'zod';
import { findLatestSessionEvent, takeWebhookRedispatch } from '../../../db/events';
import { findMerchantSession } from '../../../db/sessions';
import { listSubscribedEndpoints } from '../../../db/webhooks';
import { redispatchWebhookDelivery } from '../../../workflowClient/webhookDeliveries';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import type { AppContext } from '../../appContext';
import { conflict, HttpError, notFound } from '../../httpErrors';
import { tooManyRequests } from '../../rateLimits';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { WEBHOOKS_TAG } from './routeSets';

/**
 * | POST | /v1/sessions/{id}/retry-webhook              | SK  | 202; re-dispatches the most recent event of the session |
 * | POST | /v1/merchants/me/sessions/{id}/retry-webhook | JWT | 202 acceptance |
 *
 * The same event (same id, same bytes, freshly signed) goes again to every enabled endpoint
 * subscribed to it; see `redispatchWebhookDelivery` for how this meets an earlier delivery run.
 */
const sessionIdParams = z.object({ id: z.string().uuid() });
const HOUR_MS = 3600 * 1000;

const redispatchAccepted = z
  .object({
    eventId: z.string(),
    endpointIds: z.array(z.string().uuid()).describe('Endpoints the event is being delivered to again'),
  })
  .meta({ id: 'WebhookRedispatch' });

export function webhookRedispatchRoutes(app: AppContext): AnyRoute[] {
  const redispatch = async (merchantId: string, sessionId: string) => {
    const session = await findMerchantSession(app.db, merchantId, sessionId);
    if (!session) throw notFound('Session not found');
    const event = await findLatestSessionEvent(app.db, session.id);
    if (!event) throw conflict('The session has no event to re-dispatch yet (no deposit was detected)');
    // Each re-dispatch is one delivery per endpoint: capped per session and UTC hour, across replicas.
    const now = app.now();
    const windowStart = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
    const allowed = await takeWebhookRedispatch(app.db, {
      sessionId: session.id,
      windowStart,
      limit: app.config.WEBHOOK_RETRIES_PER_SESSION_PER_HOUR,
    });
    if (!allowed) {
      const retryAfterSec = Math.ceil((windowStart.getTime() + HOUR_MS - now.getTime()) / 1000);
      throw tooManyRequests('webhook re-dispatches of this session this hour', retryAfterSec);
    }
    const endpoints = await listSubscribedEndpoints(app.db, merchantId, event.type);
    try {
      for (const endpoint of endpoints) {
        await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
          redispatchWebhookDelivery(app.temporal, {
            eventId: event.id,
            endpointId: endpoint.id,
            taskQueue: app.taskQueues.webhooks,
          }),
        );
      }
    } catch (error) {
      app.logger.error(
        { err: error, sessionId, eventId: event.id },
        'webhook re-dispatch could not reach Temporal',
      );
      throw new HttpError(503, 'Webhook re-dispatch is unavailable right now; retry later', {
        'retry-after': '5',
      });
    }
    return {
      status: 202,
      body: { eventId: event.id, endpointIds: endpoints.map((endpoint) => endpoint.id) },
    };
  };

  const responses = {
    202: { description: 'Accepted: deliveries (re)started', schema: redispatchAccepted },
    404: { description: 'Unknown or foreign session' },
    409: { description: 'The session has no event yet' },
    429: {
      description: 'WEBHOOK_RETRIES_PER_SESSION_PER_HOUR re-dispatches used this UTC hour (Retry-After)',
    },
    503: { description: 'Temporal unreachable' },
  };
  return [
    defineRoute({
      method: 'post',
      path: '/v1/sessions/:id/retry-webhook',
      auth: 'sk',
      tag: WEBHOOKS_TAG,
      audience: 'dashboard',
      summary: "Re-send the session's most recent event to every enabled endpoint (API key)",
      params: sessionIdParams,
      responses,
      handler: ({ merchantId, params }) => redispatch(merchantId, params.id),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/merchants/me/sessions/:id/retry-webhook',
      auth: 'jwt',
      tag: WEBHOOKS_TAG,
      audience: 'dashboard',
      summary: "Re-send the session's most recent event to every enabled endpoint (dashboard)",
      params: sessionIdParams,
      responses,
      handler: ({ merchantId, params }) => redispatch(merchantId, params.id),
    }),
  ];
}
