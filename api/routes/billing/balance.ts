import { Readable } from 'node:stream';
import { z } from 'zod';
import { chainIdQuery } from '../../routing/chainIdQuery';
import { csvLine } from '../../../billing/chargesCsv';
import { hasMonthClosed, parseStatementMonth } from '../../../billing/statementMonth';
import { findBillingStatementPdf } from '../../../db/billingStatements';
import {
  gasChargeTotals,
  gasChargesBetween,
  listGasCharges,
  type GasChargeRow,
} from '../../../db/gasCharges';
import { prepaidBalanceUsd } from '../../../db/prepaidLedger';
import type { AppContext } from '../../appContext';
import { invalidField, notFound } from '../../httpErrors';
import { sequenceCursor } from '../../routing/sequenceCursor';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { PAGE_SIZES } from '../../../config/pageSizes';
import { pageLimit } from '../../routing/pageQuery';
import { DAY_MS, utcDateQuery } from '../../routing/utcDateQuery';

/**
 * | GET | /v1/merchants/me/balance | | 200 billing summary: prepaid balance, markup, current period |
 * | GET | /v1/merchants/me/balance/charges | `limit`, `cursor`, `chainId` | 200 gas charges, newest first, cursor-paged |
 * | GET | /v1/merchants/me/balance/charges.csv | `from` (required, UTC date YYYY-MM-DD inclusive), `to` (required, same format), `chainId` (optional string) | 200 CSV, oldest first |
 * | GET | /v1/merchants/me/balance/statement.pdf | `month` (required, UTC month YYYY-MM) | 200 PDF; a month becomes available shortly after it closes |
 *
 * All merchant-scoped (JWT). A gas charge is what an included sponsored operation cost: actualGasCost ×
 * ETH/USD snapshot × (1 + markup), debited from the prepaid ledger. The current period is the UTC
 * calendar month. USD amounts are decimal strings with 6 fractional digits. Statements are made by the
 * `monthly-statements` schedule (workflows/monthlyStatements.ts) and served as stored.
 */

const chargesCursor = sequenceCursor('charges', { listName: 'list' });

const chargesQuery = z.object({
  limit: pageLimit(PAGE_SIZES.standard),
  cursor: chargesCursor.query,
  chainId: chainIdQuery,
});

const csvQuery = z.object({ from: utcDateQuery, to: utcDateQuery, chainId: chainIdQuery });
/** Most days one charges CSV covers, both ends included: a year, leap day and all. */
export const CHARGES_CSV_MAX_DAYS = 366;

const statementQuery = z.object({
  month: z
    .string()
    .refine((text) => parseStatementMonth(text) !== undefined, 'must be a UTC month YYYY-MM')
    .transform((text) => parseStatementMonth(text)!),
});

const usdAmount = z.string().describe('USD, decimal string with 6 fractional digits');

const balanceSummary = z
  .object({
    prepaidBalanceUsd: usdAmount.describe('Top-ups minus gas charges; may be negative'),
    markupBps: z.number().describe('Markup on sponsored gas cost, basis points'),
    currentPeriod: z.object({
      start: z.string().describe('First instant of the current UTC calendar month'),
      end: z.string().describe('First instant of the next UTC month (exclusive)'),
      chargesUsd: usdAmount,
      operations: z.number().describe('Charged operations in the period'),
    }),
  })
  .meta({ id: 'BillingSummary' });

const chargeItem = z
  .object({
    id: z.string(),
    usageId: z.string().describe('The paymaster usage row (operation) charged'),
    clientId: z.string(),
    clientLabel: z.string().nullable(),
    chainId: z.number(),
    userOpHash: z.string(),
    txHash: z.string(),
    operationStatus: z.enum(['onchain_success', 'onchain_reverted']),
    actualGasCostWei: z.string(),
    ethUsdPrice: z.string().nullable().describe('ETH/USD snapshot; null for an unpriced charge'),
    markupBps: z.number(),
    amountUsd: usdAmount.nullable().describe('Debited amount; null for an unpriced charge (nothing debited)'),
    createdAt: z.string(),
  })
  .meta({ id: 'GasCharge' });

function toItem(row: GasChargeRow): z.infer<typeof chargeItem> {
  return {
    id: row.id,
    usageId: row.usage_id,
    clientId: row.client_id,
    clientLabel: row.client_label,
    chainId: row.chain_id,
    userOpHash: row.user_op_hash,
    txHash: row.tx_hash,
    operationStatus: row.operation_status,
    actualGasCostWei: row.actual_gas_cost_wei,
    ethUsdPrice: row.eth_usd_price,
    markupBps: row.markup_bps,
    amountUsd: row.amount_usd,
    createdAt: row.created_at.toISOString(),
  };
}

export const CHARGES_CSV_HEADER = [
  'created_at',
  'charge_id',
  'chain_id',
  'client_id',
  'client_label',
  'user_op_hash',
  'tx_hash',
  'operation_status',
  'actual_gas_cost_wei',
  'eth_usd_price',
  'markup_bps',
  'amount_usd',
];

const csvRow = (item: z.infer<typeof chargeItem>) => [
  item.createdAt,
  item.id,
  item.chainId,
  item.clientId,
  item.clientLabel,
  item.userOpHash,
  item.txHash,
  item.operationStatus,
  item.actualGasCostWei,
  item.ethUsdPrice,
  item.markupBps,
  item.amountUsd,
];

export function billingBalanceRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/balance',
      auth: 'jwt',
      tag: 'Billing',
      audience: 'dashboard',
      summary: 'Billing summary: prepaid balance, markup, current period',
      responses: { 200: { description: 'Billing summary', schema: balanceSummary } },
      async handler({ merchantId }) {
        const now = app.now();
        const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
        const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
        const [balance, totals] = await Promise.all([
          prepaidBalanceUsd(app.db, merchantId),
          gasChargeTotals(app.db, { merchantId, from: start, toExclusive: end }),
        ]);
        return {
          status: 200,
          body: {
            prepaidBalanceUsd: balance,
            markupBps: app.config.PAYMASTER_MARKUP_BPS,
            currentPeriod: { start: start.toISOString(), end: end.toISOString(), ...totals },
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/balance/charges',
      auth: 'jwt',
      tag: 'Billing',
      audience: 'dashboard',
      summary: 'Gas charges, newest first, cursor-paged',
      query: chargesQuery,
      responses: {
        200: {
          description: 'Gas charges',
          schema: z
            .object({ data: z.array(chargeItem), nextCursor: z.string().nullable() })
            .meta({ id: 'GasChargePage' }),
        },
      },
      async handler({ merchantId, query }) {
        const { rows, hasMore } = await listGasCharges(app.db, {
          merchantId,
          chainId: query.chainId,
          beforeSeq: query.cursor,
          limit: query.limit,
        });
        const nextCursor = chargesCursor.next(rows, hasMore);
        return { status: 200, body: { data: rows.map(toItem), nextCursor } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/balance/charges.csv',
      auth: 'jwt',
      tag: 'Billing',
      audience: 'dashboard',
      summary: 'Gas charges of a UTC date range (inclusive) as CSV, oldest first',
      query: csvQuery,
      responses: {
        200: { description: 'CSV with a header row', contentType: 'text/csv' },
        400: { description: 'Missing or invalid dates, from after to, or a range of more than 366 days' },
      },
      async handler({ merchantId, query, ctx }) {
        if (query.from.getTime() > query.to.getTime()) throw invalidField('from', 'must not be after to');
        // Streamed page by page; the range is still bounded so one export stays a reasonable request.
        if ((query.to.getTime() - query.from.getTime()) / DAY_MS + 1 > CHARGES_CSV_MAX_DAYS)
          throw invalidField(
            'to',
            `the range may span at most ${CHARGES_CSV_MAX_DAYS} days (request several ranges)`,
          );
        const pages = gasChargesBetween(app.db, {
          merchantId,
          from: query.from,
          toExclusive: new Date(query.to.getTime() + DAY_MS),
          chainId: query.chainId,
        });
        // The first page is read before answering, so a database failure still answers 503, not a cut CSV.
        const first = await pages.next();
        async function* lines() {
          yield csvLine(CHARGES_CSV_HEADER);
          if (first.done) return;
          for (const row of first.value) yield csvLine(csvRow(toItem(row)));
          for await (const page of pages) for (const row of page) yield csvLine(csvRow(toItem(row)));
        }
        const fromText = query.from.toISOString().slice(0, 10);
        const toText = query.to.toISOString().slice(0, 10);
        ctx.status = 200;
        ctx.type = 'text/csv; charset=utf-8';
        ctx.set('content-disposition', `attachment; filename="gas-charges-${fromText}-${toText}.csv"`);
        ctx.body = Readable.from(lines());
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/balance/statement.pdf',
      auth: 'jwt',
      tag: 'Billing',
      audience: 'dashboard',
      summary: 'Monthly prepaid gas statement (PDF) of a closed UTC month',
      query: statementQuery,
      responses: {
        200: { description: 'The statement', contentType: 'application/pdf' },
        404: {
          description: 'No statement for that month (not closed yet, not made yet, or before the account)',
        },
      },
      async handler({ merchantId, query: { month }, ctx }) {
        const pdf = await findBillingStatementPdf(app.db, merchantId, month.month);
        if (!pdf)
          throw notFound(
            hasMonthClosed(month, app.now())
              ? `No statement for ${month.month}: statements are made shortly after a month closes, for accounts that existed in it`
              : `The statement for ${month.month} is not available yet: the month closes at ${month.end.toISOString()}`,
          );
        ctx.status = 200;
        ctx.type = 'application/pdf';
        ctx.set('content-disposition', `attachment; filename="stablepay-statement-${month.month}.pdf"`);
        ctx.body = pdf;
      },
    }),
  ];
}
