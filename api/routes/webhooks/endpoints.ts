import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  deleteWebhookEndpoint,
  findMerchantWebhookEndpoint,
  insertWebhookEndpointWithinLimit,
  listWebhookEndpoints,
  updateWebhookEndpoint,
} from '../../../db/webhooks';
import { WEBHOOK_ENDPOINT_LIMIT } from '../../../webhooks/deliveryPolicy';
import { DEFAULT_WEBHOOK_EVENTS } from '../../../webhooks/events';
import { generateWebhookSecret } from '../../../webhooks/webhookSecrets';
import type { AppContext } from '../../appContext';
import { conflict, notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { WEBHOOK_ROUTE_SETS, WEBHOOKS_TAG, type WebhookRouteSet } from './routeSets';
import {
  checkWebhookUrl,
  createEndpointBody,
  endpointIdParams,
  endpointSummarySchema,
  endpointWithSecretSchema,
  toEndpointSummary,
  updateEndpointBody,
} from './webhookModels';

/**
 * Under `/v1/merchants/me/webhooks` (JWT) and `/v1/webhooks` (SK), identical shapes:
 * | POST   | (collection) | 201 endpoint with signing secret (shown once) |
 * | GET    | (collection) | 200 list |
 * | GET    | /{id}        | 200 endpoint summary |
 * | PATCH  | /{id}        | 200 summary; updatable: url, events, enabled |
 * | DELETE | /{id}        | 204; delivery history deleted too |
 */

export const webhookEndpointNotFound = () => notFound('Webhook endpoint not found');

function endpointRoutesFor(app: AppContext, { base, auth, audience, label }: WebhookRouteSet): AnyRoute[] {
  const urlPolicy = { allowPrivateTargets: app.config.WEBHOOK_ALLOW_PRIVATE_TARGETS };
  return [
    defineRoute({
      method: 'post',
      path: base,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Create a webhook endpoint; its whsec_ signing secret is returned once (${label})`,
      body: createEndpointBody,
      responses: {
        201: { description: 'Created, with the signing secret', schema: endpointWithSecretSchema },
        400: { description: 'Invalid URL, unknown event type or other invalid field' },
        409: { description: `The merchant already has ${WEBHOOK_ENDPOINT_LIMIT} endpoints` },
      },
      async handler({ merchantId, body }) {
        const url = checkWebhookUrl(body.url, urlPolicy);
        const id = randomUUID();
        const secret = generateWebhookSecret();
        const created = await insertWebhookEndpointWithinLimit(
          app.db,
          {
            id,
            merchantId,
            url,
            description: body.description ?? null,
            events: body.events ?? DEFAULT_WEBHOOK_EVENTS,
            enabled: body.enabled ?? true,
            secretCiphertext: app.webhookSecrets.seal(secret, id),
          },
          WEBHOOK_ENDPOINT_LIMIT,
        );
        if (created === 'limit_reached') {
          throw conflict(
            `Webhook endpoint limit reached: at most ${WEBHOOK_ENDPOINT_LIMIT} endpoints per merchant`,
          );
        }
        return { status: 201, body: { ...toEndpointSummary(created), secret } };
      },
    }),

    defineRoute({
      method: 'get',
      path: base,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `List webhook endpoints, oldest first (${label})`,
      responses: {
        200: {
          description: 'Endpoints (never their secrets)',
          schema: z.object({ data: z.array(endpointSummarySchema) }),
        },
      },
      async handler({ merchantId }) {
        return {
          status: 200,
          body: { data: (await listWebhookEndpoints(app.db, merchantId)).map(toEndpointSummary) },
        };
      },
    }),

    defineRoute({
      method: 'get',
      path: `${base}/:id`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `One webhook endpoint (${label})`,
      params: endpointIdParams,
      responses: {
        200: { description: 'Endpoint summary', schema: endpointSummarySchema },
        404: { description: 'Unknown or foreign endpoint' },
      },
      async handler({ merchantId, params }) {
        const endpoint = await findMerchantWebhookEndpoint(app.db, merchantId, params.id);
        if (!endpoint) throw webhookEndpointNotFound();
        return { status: 200, body: toEndpointSummary(endpoint) };
      },
    }),

    defineRoute({
      method: 'patch',
      path: `${base}/:id`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Change an endpoint's url, events, enabled flag or description; pending retries use the new values (${label})`,
      params: endpointIdParams,
      body: updateEndpointBody,
      responses: {
        200: { description: 'Endpoint summary', schema: endpointSummarySchema },
        400: { description: 'Invalid field' },
        404: { description: 'Unknown or foreign endpoint' },
      },
      async handler({ merchantId, params, body }) {
        const updated = await updateWebhookEndpoint(app.db, merchantId, params.id, {
          ...(body.url !== undefined && { url: checkWebhookUrl(body.url, urlPolicy) }),
          ...(body.events !== undefined && { events: body.events }),
          ...(body.enabled !== undefined && { enabled: body.enabled }),
          ...(body.description !== undefined && { description: body.description }),
        });
        if (!updated) throw webhookEndpointNotFound();
        return { status: 200, body: toEndpointSummary(updated) };
      },
    }),

    defineRoute({
      method: 'delete',
      path: `${base}/:id`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Delete an endpoint and its delivery history; pending retries stop (${label})`,
      params: endpointIdParams,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'Unknown or foreign endpoint' } },
      async handler({ merchantId, params }) {
        if (!(await deleteWebhookEndpoint(app.db, merchantId, params.id))) throw webhookEndpointNotFound();
        return { status: 204 };
      },
    }),
  ];
}

export function webhookEndpointRoutes(app: AppContext): AnyRoute[] {
  return WEBHOOK_ROUTE_SETS.flatMap((routeSet) => endpointRoutesFor(app, routeSet));
}
