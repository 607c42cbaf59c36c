import { z } from 'zod';
import { insertTopup, listTopups, type TopupRow } from '../../../db/topups';
import type { AppContext } from '../../appContext';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { createPaymentSession } from '../sessions/createSession';
import { createSessionBody, paymentUrlOf } from '../sessions/sessionModels';

/**
 * | GET | /v1/merchants/me/balance/topups | | 200 top-ups, newest first |
 * | POST | /v1/merchants/me/balance/topups | | 201 self-serve top-up payment session |
 *
 * Merchant-scoped (JWT). A top-up is a payment session the merchant pays to itself; when that session
 * completes, the prepaid ledger is credited with the amount once (reference `topup:<id>`).
 */

const TOPUP_MERCHANT_NAME = 'Prepaid gas top-up';

const createTopupBody = z
  .object({
    // Same rules as a session amount: decimal USD, at most 6 decimals, > 0, ≤ 1000000000.
    amount: createSessionBody.shape.amount,
    sandboxMode: createSessionBody.shape.sandboxMode,
  })
  .strict()
  .meta({ id: 'TopupCreate' });

const topupItem = z
  .object({
    id: z.string(),
    sessionId: z.string().describe('The payment session to pay'),
    paymentUrl: z.string(),
    amount: z.string().describe('USD, decimal string with 6 fractional digits'),
    status: z
      .enum(['pending', 'credited', 'expired', 'failed'])
      .describe('credited once the session completed; expired/failed follow the session'),
    createdAt: z.string(),
  })
  .meta({ id: 'Topup' });

export function billingTopupRoutes(app: AppContext): AnyRoute[] {
  const toItem = (row: TopupRow): z.infer<typeof topupItem> => ({
    id: row.id,
    sessionId: row.session_id,
    paymentUrl: paymentUrlOf(app.config.PUBLIC_BASE_URL, row.session_id),
    amount: row.amount_usd,
    status: row.status,
    createdAt: row.created_at.toISOString(),
  });
  return [
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/balance/topups',
      auth: 'jwt',
      tag: 'Billing',
      audience: 'dashboard',
      summary: 'Top-ups, newest first',
      responses: {
        200: {
          description: 'Top-ups',
          schema: z.object({ data: z.array(topupItem) }).meta({ id: 'TopupList' }),
        },
      },
      async handler({ merchantId }) {
        return { status: 200, body: { data: (await listTopups(app.db, merchantId)).map(toItem) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/merchants/me/balance/topups',
      auth: 'jwt',
      tag: 'Billing',
      audience: 'dashboard',
      summary: 'Self-serve top-up: a payment session that credits the prepaid balance when completed',
      body: createTopupBody,
      responses: {
        201: { description: 'Created', schema: topupItem },
        400: { description: 'Invalid body' },
      },
      async handler({ merchantId, body }) {
        let topup: TopupRow | undefined;
        // The session and its top-up row commit together: never a payable top-up session that cannot credit.
        await createPaymentSession(app, {
          merchantId,
          body: { amount: body.amount, sandboxMode: body.sandboxMode, merchantName: TOPUP_MERCHANT_NAME },
          alsoWrite: async (trx, sessionId) => {
            topup = await insertTopup(trx, { merchantId, sessionId, amountUsd: body.amount });
          },
        });
        return { status: 201, body: toItem(topup!) };
      },
    }),
  ];
}
