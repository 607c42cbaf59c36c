import { z } from 'zod';
import { effectiveStatus, findSessionById, listPaymentOptions } from '../../../db/sessions';
import { sessionAmountOf } from '../../../db/refunds';
import type { AppContext } from '../../appContext';
import { notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { createSessionRoute } from './createSession';
import { sessionExportRoutes } from './sessionExport';
import { publicSessionSchema, sessionStatusViewSchema, toPublicSession } from './sessionModels';

/**
 * | POST | /v1/sessions             | SK   | 201 {id, paymentUrl, status, expiresAt, createdAt}; 401 missing or unknown key |
 * | GET  | /v1/sessions/export      | SK   | 200 CSV of the merchant's sessions (sessionExport.ts) |
 * | GET  | /v1/sessions/{id}        | none | 200 session with payment options and line items; 404 when unknown |
 * | GET  | /v1/sessions/{id}/status | none | 200 {status, webhookDelivered}; 404 when unknown |
 */
export const sessionIdParams = z.object({ id: z.string().uuid() });

export const sessionNotFound = () => notFound('Session not found');

export function sessionRoutes(app: AppContext): AnyRoute[] {
  return [
    createSessionRoute(app, {
      path: '/v1/sessions',
      auth: 'sk',
      audience: 'integrator',
      summary: 'Create a payment session (invoice)',
    }),

    // Before `/v1/sessions/:id`: `export` is not a session id.
    sessionExportRoutes(app).sk,

    defineRoute({
      method: 'get',
      path: '/v1/sessions/:id',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: 'Payment sessions',
      audience: 'integrator',
      summary: 'Public read: the session with its payment options and line items',
      params: sessionIdParams,
      responses: {
        200: { description: 'Session', schema: publicSessionSchema },
        404: { description: 'Unknown session' },
      },
      async handler({ params }) {
        const session = await findSessionById(app.db, params.id);
        if (!session) throw sessionNotFound();
        const [options, amounts] = await Promise.all([
          listPaymentOptions(app.db, session.id),
          sessionAmountOf(app.db, session.id),
        ]);
        return {
          status: 200,
          body: toPublicSession(session, options, {
            publicBaseUrl: app.config.PUBLIC_BASE_URL,
            now: app.now(),
            amounts,
          }),
        };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/sessions/:id/status',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: 'Payment sessions',
      audience: 'integrator',
      summary: 'Session status view, polled by the checkout page',
      params: sessionIdParams,
      responses: {
        200: { description: 'Status', schema: sessionStatusViewSchema },
        404: { description: 'Unknown session' },
      },
      async handler({ params }) {
        const session = await findSessionById(app.db, params.id);
        if (!session) throw sessionNotFound();
        return {
          status: 200,
          body: { status: effectiveStatus(session, app.now()), webhookDelivered: session.webhook_delivered },
        };
      },
    }),
  ];
}
