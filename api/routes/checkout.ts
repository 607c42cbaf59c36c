import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { receivedBeforeExpiry } from '../../db/sessionEvents';
import { findSessionById, listPaymentOptions } from '../../db/sessions';
import { receivedAmountOf, usdDifference, usdExceeds } from '../../db/receivedAmounts';
import { sessionAmountOf } from '../../db/refunds';
import { setStrictPageHeaders } from '../../web/strictPageHeaders';
import { renderCheckoutNotFoundPage, renderCheckoutPage } from '../../web/checkout/renderCheckoutPage';
import type { AppContext } from '../appContext';
import { defineRoute, type AnyRoute } from '../routing/route';
import { toPublicSession } from './sessions/sessionModels';

/**
 * | GET | /pay/{id} | none | 200 text/html checkout page (the session's paymentUrl); 404 text/html when unknown or malformed |
 *
 * The page shows the same data as the public read `GET /v1/sessions/{id}` (built by the same
 * function) and polls `GET /v1/sessions/{id}/status`.
 */
const sessionId = z.string().uuid();

/**
 * What the page tells a payer whose money went beyond the order: an overpayment once the session is paid,
 * a transfer that reached an expired session late (on an expired session every `late` row came after expiry:
 * an on-time one is `accepted`).
 */
async function paymentOutcomeOf(
  app: AppContext,
  view: { id: string; status: string; amount: string; receivedAmount: string },
): Promise<{ overpaidAmount?: string; lateAmount?: string }> {
  if (['confirming', 'bridging', 'completed'].includes(view.status))
    return usdExceeds(view.receivedAmount, view.amount)
      ? { overpaidAmount: usdDifference(view.receivedAmount, view.amount) }
      : {};
  if (view.status !== 'expired') return {};
  const lateAmount = await receivedAmountOf(app.db, view.id, { kind: 'late' });
  return lateAmount === '0' ? {} : { lateAmount };
}

export function checkoutRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/pay/:id',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: 'Checkout',
      audience: 'dashboard',
      summary: "Checkout page the payer opens from the session's paymentUrl",
      responses: {
        200: { description: 'Checkout page', contentType: 'text/html', schema: z.string() },
        404: {
          description: 'Unknown or malformed session id (HTML page)',
          contentType: 'text/html',
          schema: z.string(),
        },
      },
      // The id is checked here rather than by a params schema: a bad link answers the HTML 404 page, not JSON.
      async handler({ ctx }) {
        const nonce = randomBytes(16).toString('base64');
        const id = String(ctx.params.id);
        const session = sessionId.safeParse(id).success ? await findSessionById(app.db, id) : undefined;
        setStrictPageHeaders(ctx, nonce);
        ctx.type = 'html';
        if (!session) {
          ctx.status = 404;
          ctx.body = renderCheckoutNotFoundPage({ nonce });
          return;
        }
        const now = app.now();
        const [options, amounts] = await Promise.all([
          listPaymentOptions(app.db, session.id),
          sessionAmountOf(app.db, session.id),
        ]);
        const view = toPublicSession(session, options, {
          publicBaseUrl: app.config.PUBLIC_BASE_URL,
          now,
          amounts,
        });
        // An expired session that was partly paid shows what arrived (the underpaid state).
        const receivedAmount =
          view.status === 'expired' ? await receivedBeforeExpiry(app.db, session.id) : undefined;
        ctx.status = 200;
        ctx.body = await renderCheckoutPage({
          session: view,
          webhookDelivered: session.webhook_delivered,
          receivedAmount,
          outcome: await paymentOutcomeOf(app, view),
          now,
          nonce,
        });
      },
    }),
  ];
}
