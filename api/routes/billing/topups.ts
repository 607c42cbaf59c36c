import { z } from 'zod';
import { platformTreasuryFor } from '../../../billing/platformTreasury';
import { insertTopup, listTopups, type TopupRow } from '../../../db/topups';
import type { AppContext } from '../../appContext';
import { invalidField } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { usdAmount } from '../../routing/decimalAmounts';
import { createPaymentSession, paymentUrlOf } from '../../sessions/createPaymentSession';

/**
 * | GET | /v1/merchants/me/balance/topups | | 200 top-ups, newest first |
 * | POST | /v1/merchants/me/balance/topups | | 201 self-serve top-up payment session |
 *
 * Merchant-scoped (JWT). A top-up is a live payment session whose forwarders settle to the platform
 * treasury (billing/platformTreasury.ts), never to the merchant; the prepaid ledger is credited with what
 * the treasury received, once per settlement. Top-ups are live only: testnet tokens have an open mint and
 * testnet sponsorship needs no prepaid balance, so `sandboxMode: true` is refused.
 */

const TOPUP_MERCHANT_NAME = 'Prepaid gas top-up';

const createTopupBody = z
  .object({
    // Same rules as a session amount: decimal USD, at most 6 decimals, > 0, ≤ 1000000000.
    amount: usdAmount.describe('Decimal USD amount, at most 6 decimals'),
    sandboxMode: z
      .boolean()
      .optional()
      .describe('Only false: top-ups buy mainnet sponsorship and are paid on mainnets'),
  })
  .strict()
  .meta({ id: 'TopupCreate' });

const topupItem = z
  .object({
    id: z.string(),
    sessionId: z.string().describe('The payment session to pay'),
    paymentUrl: z.string(),
    amount: z.string().describe('USD asked for, decimal string with 6 fractional digits'),
    creditedAmount: z
      .string()
      .describe('USD credited to the prepaid balance: what the treasury received (6 fractional digits)'),
    status: z
      .enum(['pending', 'credited', 'expired', 'failed'])
      .describe('credited once the treasury received funds; expired/failed follow the session'),
    createdAt: z.string(),
  })
  .meta({ id: 'Topup' });

export function billingTopupRoutes(app: AppContext): AnyRoute[] {
  const toItem = (row: TopupRow): z.infer<typeof topupItem> => ({
    id: row.id,
    sessionId: row.session_id,
    paymentUrl: paymentUrlOf(app.config.PUBLIC_BASE_URL, row.session_id),
    amount: row.amount_usd,
    creditedAmount: row.credited_amount_usd,
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
        400: { description: 'Invalid body, or sandboxMode true (top-ups are live only)' },
      },
      async handler({ merchantId, body }) {
        if (body.sandboxMode)
          throw invalidField(
            'sandboxMode',
            'top-ups are live only (testnet sponsorship needs no prepaid balance)',
          );
        let topup: TopupRow | undefined;
        // The session and its top-up row commit together: never a payable top-up session that cannot credit.
        await createPaymentSession(app, {
          merchantId,
          request: { amount: body.amount, sandboxMode: false, merchantName: TOPUP_MERCHANT_NAME },
          payoutAddressOf: (chainId) => platformTreasuryFor(app.config, chainId),
          alsoWrite: async (trx, sessionId) => {
            topup = await insertTopup(trx, { merchantId, sessionId, amountUsd: body.amount });
          },
        });
        return { status: 201, body: toItem(topup!) };
      },
    }),
  ];
}
