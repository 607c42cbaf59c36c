import { z } from 'zod';
import { chainIdQuery } from '../../routing/chainIdQuery';
import { listUsageRecords } from '../../../db/paymasterUsage';
import { PAYMASTER_USAGE_STATUSES } from '../../../db/paymasterUsageStatus';
import type { AppContext } from '../../appContext';
import { toUsageRecord, usageRecordSchema } from './usageRecordModel';
import { sequenceCursor } from '../../routing/sequenceCursor';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { PAGE_SIZES } from '../../../config/pageSizes';
import { pageLimit } from '../../routing/pageQuery';

/**
 * | GET | /v1/paymaster/usage | query `limit`, `cursor`, `clientId`, `chainId`, `mode` (sponsored/user_paid),
 * |     |                     | `status` (usage status enum) → 200 cursor-paged usage records |
 *
 * Newest first. `nextCursor` is opaque; null on the last page.
 */

const usageCursor = sequenceCursor('seq', { listName: 'list' });

const usageQuery = z.object({
  limit: pageLimit(PAGE_SIZES.standard),
  cursor: usageCursor.query,
  clientId: z.string().min(1).max(100).optional(),
  chainId: chainIdQuery,
  mode: z.enum(['sponsored', 'user_paid']).optional(),
  status: z.enum(PAYMASTER_USAGE_STATUSES).optional(),
});

export function paymasterUsageRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/paymaster/usage',
      auth: 'jwt',
      tag: 'Paymaster usage',
      audience: 'dashboard',
      summary: 'Sponsorship usage records, newest first, cursor-paged',
      query: usageQuery,
      responses: {
        200: {
          description: 'Usage records',
          schema: z
            .object({ data: z.array(usageRecordSchema), nextCursor: z.string().nullable() })
            .meta({ id: 'PaymasterUsagePage' }),
        },
      },
      async handler({ merchantId, query }) {
        const { rows, hasMore } = await listUsageRecords(app.db, {
          merchantId,
          clientId: query.clientId,
          chainId: query.chainId,
          mode: query.mode,
          status: query.status,
          beforeSeq: query.cursor,
          limit: query.limit,
        });
        const nextCursor = usageCursor.next(rows, hasMore);
        return { status: 200, body: { data: rows.map(toUsageRecord), nextCursor } };
      },
    }),
  ];
}
