import { Readable } from 'node:stream';
import { z } from 'zod';
import { csvLine } from '../../../billing/chargesCsv';
import { normaliseDecimal } from '../../../money/baseUnits';
import { sessionExportPages, type SessionExportRow } from '../../../db/sessionExport';
import { effectiveStatus } from '../../../db/sessions';
import type { AppContext } from '../../appContext';
import { invalidField } from '../../httpErrors';
import { defineRoute, type AnyRoute, type Audience, type AuthKind } from '../../routing/route';
import { daysIncluded, DAY_MS, utcDateQuery } from '../../routing/utcDateQuery';

/**
 * | GET | /v1/sessions/export                  | SK  | `from`, `to` (UTC dates YYYY-MM-DD, inclusive, at most 366 days), `format` (`csv`, the default) | 200 CSV, one row per session created in the range, oldest first; 400 field errors |
 * | GET | /v1/merchants/me/sessions/export     | JWT | the same | the same |
 *
 * Streamed: sessions are read in keyset pages (db/sessionExport.ts) and each page is written before the
 * next is read. Mounted before `/…/sessions/:id`, which would otherwise take `export` for an id.
 */

/** The columns, in order (docs/service-contract.md names them). */
export const SESSION_EXPORT_HEADER = [
  'id',
  'createdAt',
  'status',
  'amount',
  'receivedAmount',
  'settledAmount',
  'chainId',
  'token',
  'depositTxHashes',
  'settlementTxHashes',
  'susdeShares',
  'refundedAmount',
  'refunds',
];

/** Most days one export covers, both ends included: a year, leap day and all. */
export const SESSION_EXPORT_MAX_DAYS = 366;

const exportQuery = z.object({
  from: utcDateQuery,
  to: utcDateQuery,
  format: z.literal('csv', { error: 'must be csv' }).default('csv'),
});

/** Several values in one field (a session paid on two chains, swept twice): `;`-separated. */
const joined = (values: (string | number)[]) => values.join(';');

function csvRow({ session, ...payments }: SessionExportRow, now: Date): (string | number)[] {
  return [
    session.id,
    session.created_at.toISOString(),
    effectiveStatus(session, now),
    normaliseDecimal(session.amount),
    payments.receivedAmount,
    normaliseDecimal(session.settled_amount),
    joined(payments.chainIds),
    joined(payments.tokens),
    joined(payments.depositTxHashes),
    joined(payments.settlementTxHashes),
    payments.susdeShares,
    payments.refundedAmount,
    joined(payments.refunds),
  ];
}

function sessionExportRoute(
  app: AppContext,
  { path, auth, audience }: { path: string; auth: AuthKind; audience: Audience },
): AnyRoute {
  return defineRoute({
    method: 'get',
    path,
    auth,
    tag: 'Payment sessions',
    audience,
    summary: 'The merchant’s sessions created in a UTC date range (inclusive) as CSV, oldest first',
    query: exportQuery,
    responses: {
      200: { description: 'CSV with a header row, one row per session', contentType: 'text/csv' },
      400: {
        description:
          'Missing or invalid dates, from after to, a range of more than 366 days, or a format other than csv',
      },
    },
    async handler({ merchantId, query, ctx }) {
      if (query.from.getTime() > query.to.getTime()) throw invalidField('from', 'must not be after to');
      if (daysIncluded(query.from, query.to) > SESSION_EXPORT_MAX_DAYS)
        throw invalidField(
          'to',
          `the range may span at most ${SESSION_EXPORT_MAX_DAYS} days (request several ranges)`,
        );
      const now = app.now();
      const pages = sessionExportPages(app.db, {
        merchantId,
        from: query.from,
        toExclusive: new Date(query.to.getTime() + DAY_MS),
      });
      // The first page is read before answering, so a database failure still answers 503, not a cut CSV.
      const first = await pages.next();
      async function* lines() {
        yield csvLine(SESSION_EXPORT_HEADER);
        if (first.done) return;
        for (const row of first.value) yield csvLine(csvRow(row, now));
        for await (const page of pages) for (const row of page) yield csvLine(csvRow(row, now));
      }
      const fromText = query.from.toISOString().slice(0, 10);
      const toText = query.to.toISOString().slice(0, 10);
      ctx.status = 200;
      ctx.type = 'text/csv; charset=utf-8';
      ctx.set('content-disposition', `attachment; filename="sessions-${fromText}-${toText}.csv"`);
      ctx.body = Readable.from(lines());
    },
  });
}

/** The SK route (integrators) and the JWT route (the dashboard's download). */
export function sessionExportRoutes(app: AppContext): { sk: AnyRoute; jwt: AnyRoute } {
  return {
    sk: sessionExportRoute(app, { path: '/v1/sessions/export', auth: 'sk', audience: 'integrator' }),
    jwt: sessionExportRoute(app, {
      path: '/v1/merchants/me/sessions/export',
      auth: 'jwt',
      audience: 'dashboard',
    }),
  };
}
