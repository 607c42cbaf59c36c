import { randomUUID } from 'node:crypto';
import type { EndpointDisabling } from '../db/webhookDeliveries';
import { WEBHOOK_DISABLE_AFTER_FAILING_MS } from './deliveryPolicy';
import { newEventId, serialiseEndpointDisabledEvent } from './events';

/**
 * The disabling of a failing endpoint (docs/operations.md, webhook deliveries): after
 * WEBHOOK_DISABLE_AFTER_FAILING_MS of failed attempts, with an `endpoint.disabled` event dated at the
 * disabling attempt. db/webhookDeliveries.ts applies it in the attempt's transaction.
 */
export const ENDPOINT_DISABLING: EndpointDisabling = {
  afterFailingMs: WEBHOOK_DISABLE_AFTER_FAILING_MS,
  disabledEvent(endpoint, disabledAt) {
    const id = newEventId(randomUUID());
    const payload = serialiseEndpointDisabledEvent({
      id,
      type: 'endpoint.disabled',
      createdAt: disabledAt.toISOString(),
      data: { endpoint: { id: endpoint.id, url: endpoint.url, disabledAt: disabledAt.toISOString() } },
    });
    return { id, payload };
  },
};
