import { z } from 'zod';
import { chainIdQuery } from '../../routing/chainIdQuery';
import {
  listRecentOperations,
  listUsageRecords,
  tallyUsage,
  type UsageRecordRow,
} from '../../../db/paymasterUsage';
import { tallyRefusedRequests } from '../../../db/paymasterMalformedRequests';
import { PAYMASTER_USAGE_STATUSES } from '../../../db/paymasterUsageStatus';
import type { AppContext } from '../../appContext';
import { toUsageRecord, usageRecordSchema } from './usageRecordModel';
import { sequenceCursor } from '../../routing/sequenceCursor';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { PAGE_SIZES } from '../../../config/pageSizes';
import { pageLimit } from '../../routing/pageQuery';

/**
 * | GET | /v1/merchants/me/paymaster/overview | `window`: 24h, 7d, 30d, all; default 24h; unknown value falls back to 24h | 200 overview |
 * | GET | /v1/merchants/me/paymaster/overview/recent-ops | `limit` 1 to 100, default 20 | 200 array of recent operations |
 * | GET | /v1/merchants/me/paymaster/activity | `limit` 1 to 200 default 50; `cursor` (the previous page's `nextCursor`); `mode`; `chainId`; `status` | 200 cursor-paged feed |
 *
 * All merchant-scoped (JWT). The feed holds every usage row (denials and signed operations), newest
 * first; recent operations are the signed ones only. Gas figures are wei as decimal strings.
 */

const activityCursor = sequenceCursor('activity', { listName: 'feed' });

const OVERVIEW_WINDOWS = {
  '24h': 24 * 3600,
  '7d': 7 * 24 * 3600,
  '30d': 30 * 24 * 3600,
  all: undefined,
} as const;

const overviewQuery = z.object({
  // SPEC: an unknown window falls back to 24h instead of failing.
  window: z.enum(['24h', '7d', '30d', 'all']).catch('24h'),
});

const recentOpsQuery = z.object({
  limit: pageLimit(PAGE_SIZES.standard),
});

const activityQuery = z.object({
  limit: pageLimit(PAGE_SIZES.activity),
  cursor: activityCursor.query,
  mode: z.enum(['sponsored', 'user_paid']).optional(),
  chainId: chainIdQuery,
  status: z.enum(PAYMASTER_USAGE_STATUSES).optional(),
});

/** A feed item: the usage record, and where its operation landed. */
const activityItem = usageRecordSchema
  .extend({
    validUntil: z.string().nullable().describe('End of the signed paymaster data validity'),
    txHash: z.string().nullable(),
    blockNumber: z.string().nullable(),
  })
  .meta({ id: 'PaymasterActivityItem' });

function toItem(row: UsageRecordRow): z.infer<typeof activityItem> {
  return {
    ...toUsageRecord(row),
    validUntil: row.valid_until?.toISOString() ?? null,
    txHash: row.tx_hash,
    blockNumber: row.block_number,
  };
}

const modeFigures = z.object({
  operations: z.number().describe('Signed operations in this mode'),
  gasSpentWei: z.string(),
});

/** Requests refused before an operation was read: counted per client and hour, not usage rows. */
const refusedRequests = z.object({
  total: z.number(),
  byClient: z.array(z.object({ clientId: z.string(), count: z.number() })).describe('Most first'),
});

const overview = z
  .object({
    window: z.enum(['24h', '7d', '30d', 'all']),
    since: z.string().nullable().describe('Start of the window; null for all'),
    counts: z
      .object({
        total: z.number(),
        denied: z.number().describe('Every denied_* status'),
        submitted: z.number().describe('Signed, no receipt yet'),
        succeeded: z.number(),
        reverted: z.number(),
        dropped: z.number(),
      })
      .describe('Usage rows per status group'),
    sponsored: modeFigures,
    userPaid: modeFigures,
    gasSpentWei: z.string().describe('Sum of actualGasCost of included operations'),
    malformedRequests: refusedRequests.describe(
      'Requests refused for their shape (parse error, unknown method, invalid params, a method the bundler proxy does not relay): counted per client and hour, not usage rows; the window starts at the hour its start falls in',
    ),
    originDenials: refusedRequests.describe(
      'Requests refused with 403 paymaster_origin_not_allowed (Origin missing or not in allowedOrigins): counted per client and hour, not usage rows; the window starts at the hour its start falls in',
    ),
  })
  .meta({ id: 'PaymasterOverview' });

const totalled = (byClient: { clientId: string; count: number }[]) => ({
  total: byClient.reduce((sum, { count }) => sum + count, 0),
  byClient,
});

type StatusGroup = keyof z.infer<typeof overview>['counts'];
const groupOf = (status: string): Exclude<StatusGroup, 'total'> =>
  status.startsWith('denied_')
    ? 'denied'
    : status === 'onchain_success'
      ? 'succeeded'
      : status === 'onchain_reverted'
        ? 'reverted'
        : status === 'dropped'
          ? 'dropped'
          : 'submitted';

export function paymasterActivityRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/paymaster/overview',
      auth: 'jwt',
      tag: 'Paymaster activity',
      audience: 'dashboard',
      summary: 'Paymaster figures of a time window: operations per status group and mode, gas spent',
      query: overviewQuery,
      responses: { 200: { description: 'Overview', schema: overview } },
      async handler({ merchantId, query }) {
        const seconds = OVERVIEW_WINDOWS[query.window];
        const since = seconds === undefined ? undefined : new Date(app.now().getTime() - seconds * 1000);
        const [tallies, malformed, originDenials] = await Promise.all([
          tallyUsage(app.db, { merchantId, since }),
          tallyRefusedRequests(app.db, { merchantId, since, kind: 'malformed' }),
          tallyRefusedRequests(app.db, { merchantId, since, kind: 'origin' }),
        ]);
        const counts = { total: 0, denied: 0, submitted: 0, succeeded: 0, reverted: 0, dropped: 0 };
        const byMode = { sponsored: { operations: 0, gas: 0n }, user_paid: { operations: 0, gas: 0n } };
        for (const tally of tallies) {
          counts.total += tally.count;
          counts[groupOf(tally.status)] += tally.count;
          // Denials carry a mode only when it was read before refusing: they are no operations.
          if (tally.mode && !tally.status.startsWith('denied_')) {
            byMode[tally.mode].operations += tally.count;
            byMode[tally.mode].gas += BigInt(tally.gasCostWei);
          }
        }
        return {
          status: 200,
          body: {
            window: query.window,
            since: since?.toISOString() ?? null,
            counts,
            sponsored: {
              operations: byMode.sponsored.operations,
              gasSpentWei: byMode.sponsored.gas.toString(),
            },
            userPaid: {
              operations: byMode.user_paid.operations,
              gasSpentWei: byMode.user_paid.gas.toString(),
            },
            gasSpentWei: (byMode.sponsored.gas + byMode.user_paid.gas).toString(),
            malformedRequests: totalled(malformed),
            originDenials: totalled(originDenials),
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/paymaster/overview/recent-ops',
      auth: 'jwt',
      tag: 'Paymaster activity',
      audience: 'dashboard',
      summary: 'The most recent signed operations, newest first',
      query: recentOpsQuery,
      responses: {
        200: {
          description: 'Recent operations',
          schema: z.array(activityItem).meta({ id: 'PaymasterRecentOperations' }),
        },
      },
      async handler({ merchantId, query }) {
        const rows = await listRecentOperations(app.db, { merchantId, limit: query.limit });
        return { status: 200, body: rows.map(toItem) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/merchants/me/paymaster/activity',
      auth: 'jwt',
      tag: 'Paymaster activity',
      audience: 'dashboard',
      summary: 'Every paymaster decision and operation, newest first, cursor-paged',
      query: activityQuery,
      responses: {
        200: {
          description: 'Activity feed',
          schema: z
            .object({ data: z.array(activityItem), nextCursor: z.string().nullable() })
            .meta({ id: 'PaymasterActivityPage' }),
        },
      },
      async handler({ merchantId, query }) {
        const { rows, hasMore } = await listUsageRecords(app.db, {
          merchantId,
          chainId: query.chainId,
          mode: query.mode,
          status: query.status,
          beforeSeq: query.cursor,
          limit: query.limit,
        });
        const nextCursor = activityCursor.next(rows, hasMore);
        return { status: 200, body: { data: rows.map(toItem), nextCursor } };
      },
    }),
  ];
}
