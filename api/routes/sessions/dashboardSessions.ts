import { z } from 'zod';
import { findMerchantSession, listMerchantSessions } from '../../../db/sessions';
import { sessionAmountOf, sessionAmountsOf } from '../../../db/refunds';
import type { AppContext } from '../../appContext';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { createSessionRoute } from './createSession';
import { sessionExportRoutes } from './sessionExport';
import { retrySessionForwarder } from './retryForwarder';
import { SESSION_STATUSES } from '../../../db/sessionStatus';
import { sessionSummarySchema, toSessionSummary } from './sessionModels';
import { sessionEventsRoute } from './sessionEvents';
import { sessionIdParams, sessionNotFound } from './sessions';
import { offsetPageQuery } from '../../routing/pageQuery';

/**
 * | GET  | /v1/merchants/me/sessions      | query limit, page, status, subscriptionId | 200 paged list of session summaries |
 * | POST | /v1/merchants/me/sessions      | session create body       | 201 session create response |
 * | GET  | /v1/merchants/me/sessions/export | query from, to, format      | 200 CSV of the merchant's sessions (sessionExport.ts) |
 * | GET  | /v1/merchants/me/sessions/{id} |                           | 200 session summary |
 * | GET  | /v1/merchants/me/sessions/{id}/events |                    | 200 its events with their webhook deliveries (sessionEvents.ts) |
 * | POST | /v1/merchants/me/sessions/{id}/retry-forwarder |          | 202 acceptance; 404 foreign; 409 not retryable |
 */
const listQuery = z.object({
  ...offsetPageQuery,
  status: z.enum(SESSION_STATUSES).optional(),
  subscriptionId: z
    .string()
    .uuid('must be a subscription id')
    .optional()
    .describe('Only the period sessions (invoices) of this subscription'),
});

export function dashboardSessionRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/sessions',
      auth: 'jwt',
      tag: 'Payment sessions',
      audience: 'dashboard',
      summary: 'List the merchant’s sessions, newest first (status honours computed expiry)',
      query: listQuery,
      responses: {
        200: {
          description: 'Page of sessions',
          schema: z.object({
            data: z.array(sessionSummarySchema),
            page: z.number(),
            limit: z.number(),
            total: z.number(),
          }),
        },
        400: { description: 'Bad limit, page or status' },
      },
      async handler({ merchantId, query }) {
        const now = app.now();
        const { rows, total } = await listMerchantSessions(app.db, { merchantId, ...query, now });
        const amounts = await sessionAmountsOf(
          app.db,
          rows.map((row) => row.id),
        );
        const publicBaseUrl = app.config.PUBLIC_BASE_URL;
        return {
          status: 200,
          body: {
            data: rows.map((row) =>
              toSessionSummary(row, { publicBaseUrl, now, amounts: amounts.get(row.id)! }),
            ),
            page: query.page,
            limit: query.limit,
            total,
          },
        };
      },
    }),

    createSessionRoute(app, {
      path: '/v1/merchants/me/sessions',
      auth: 'jwt',
      audience: 'dashboard',
      summary: 'Create a payment session from the dashboard (same body as POST /v1/sessions)',
    }),

    // Before `/v1/merchants/me/sessions/:id`: `export` is not a session id.
    sessionExportRoutes(app).jwt,

    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/sessions/:id',
      auth: 'jwt',
      tag: 'Payment sessions',
      audience: 'dashboard',
      summary: 'One of the merchant’s sessions',
      params: sessionIdParams,
      responses: {
        200: { description: 'Session summary', schema: sessionSummarySchema },
        404: { description: 'Unknown or foreign session' },
      },
      async handler({ merchantId, params }) {
        const session = await findMerchantSession(app.db, merchantId, params.id);
        if (!session) throw sessionNotFound();
        const amounts = await sessionAmountOf(app.db, session.id);
        return {
          status: 200,
          body: toSessionSummary(session, {
            publicBaseUrl: app.config.PUBLIC_BASE_URL,
            now: app.now(),
            amounts,
          }),
        };
      },
    }),

    sessionEventsRoute(app),

    defineRoute({
      method: 'post',
      path: '/v1/merchants/me/sessions/:id/retry-forwarder',
      auth: 'jwt',
      tag: 'Payment sessions',
      audience: 'dashboard',
      summary: 'Re-run the on-chain phase of a failed session, or settle funds that arrived after expiry',
      params: sessionIdParams,
      responses: {
        202: {
          description: 'Accepted',
          schema: z.object({
            id: z.string(),
            accepted: z.literal(true),
            action: z.enum(['retrying', 'settling_late_deposit']),
          }),
        },
        404: { description: 'Unknown or foreign session' },
        409: {
          description:
            'Not in a retryable state, or a refund from the session’s forwarder is pending (the sweep waits until it ends)',
        },
      },
      handler: ({ merchantId, params }) => retrySessionForwarder(app, { merchantId, sessionId: params.id }),
    }),
  ];
}
