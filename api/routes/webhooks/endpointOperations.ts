import {
  findMerchantWebhookEndpoint,
  takeEndpointOperation,
  type WebhookEndpointRow,
} from '../../../db/webhooks';
import { WEBHOOK_ENDPOINT_OPERATIONS_PER_HOUR } from '../../../webhooks/deliveryPolicy';
import type { AppContext } from '../../appContext';
import { conflict, HttpError } from '../../httpErrors';
import { tooManyRequests } from '../../rateLimits';
import { webhookEndpointNotFound } from './endpoints';

/**
 * What every operation that sends to one endpoint on request (resend, recover, test event) checks
 * first: the endpoint is the merchant's (404 otherwise), it is enabled (409), and one of this UTC
 * hour's operations is left for it across every api replica (429 with Retry-After; docs/decisions.md "Webhook delivery operations").
 */
const HOUR_MS = 3600_000;

export const ENDPOINT_OPERATION_RESPONSES = {
  404: { description: 'Unknown or foreign endpoint' },
  409: { description: 'The endpoint is disabled' },
  429: {
    description: `${WEBHOOK_ENDPOINT_OPERATIONS_PER_HOUR} resends, recoveries and test events used this UTC hour (Retry-After)`,
  },
  503: { description: 'Temporal unreachable (Retry-After)' },
} as const;

export function endpointOperations(app: AppContext) {
  return {
    /** The merchant's endpoint, or 404. */
    async endpointOf(merchantId: string, id: string): Promise<WebhookEndpointRow> {
      const endpoint = await findMerchantWebhookEndpoint(app.db, merchantId, id);
      if (!endpoint) throw webhookEndpointNotFound();
      return endpoint;
    },

    /** Needs an enabled endpoint and one of this hour's operations. */
    async takeOperation(endpoint: WebhookEndpointRow): Promise<void> {
      if (!endpoint.enabled) throw conflict('The webhook endpoint is disabled; enable it first');
      const now = app.now();
      const windowStart = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
      const allowed = await takeEndpointOperation(app.db, {
        endpointId: endpoint.id,
        windowStart,
        limit: WEBHOOK_ENDPOINT_OPERATIONS_PER_HOUR,
      });
      if (!allowed) {
        const retryAfterSec = Math.ceil((windowStart.getTime() + HOUR_MS - now.getTime()) / 1000);
        throw tooManyRequests(
          'resends, recoveries and test events of this endpoint this hour',
          retryAfterSec,
        );
      }
    },
  };
}

/** Temporal did not take the delivery: 503 with Retry-After, the operation named. */
export function deliveryUnavailable(operation: string): HttpError {
  return new HttpError(503, `${operation} is unavailable right now; retry later`, { 'retry-after': '5' });
}
