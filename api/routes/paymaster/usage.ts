import { getAddress } from 'viem';
import { z } from 'zod';
import { chainIdQuery } from '../../routing/chainIdQuery';
import { listUsageRecords, type UsageRecordRow } from '../../../db/paymasterUsage';
import { PAYMASTER_USAGE_STATUSES } from '../../../paymaster/usageRecords';
import type { AppContext } from '../../appContext';
import { sequenceCursor } from '../../routing/sequenceCursor';
import { defineRoute, type AnyRoute } from '../../routing/route';

/**
 * | GET | /v1/paymaster/usage | query `limit`, `cursor`, `clientId`, `chainId`, `mode` (sponsored/user_paid),
 * |     |                     | `status` (usage status enum) → 200 cursor-paged usage records |
 *
 * Newest first. `nextCursor` is opaque; null on the last page.
 */

const usageCursor = sequenceCursor('seq', { listName: 'list' });

const usageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: usageCursor.query,
  clientId: z.string().min(1).max(100).optional(),
  chainId: chainIdQuery,
  mode: z.enum(['sponsored', 'user_paid']).optional(),
  status: z.enum(PAYMASTER_USAGE_STATUSES).optional(),
});

const usageRecord = z
  .object({
    id: z.string(),
    clientId: z.string(),
    method: z.string().nullable(),
    chainId: z
      .number()
      .nullable()
      .describe('Null when the request was refused before its chain could be read'),
    mode: z.enum(['sponsored', 'user_paid']).nullable(),
    status: z.enum(PAYMASTER_USAGE_STATUSES),
    reason: z
      .string()
      .nullable()
      .describe(
        'Short cause of a denial, e.g. undecodable_calldata; for a delegated transfer (SPEC rule 7) delegated_by:<owner>',
      ),
    sender: z.string().nullable(),
    entryPoint: z.string().nullable(),
    userOpHash: z.string().nullable(),
    targets: z.array(z.string()).describe('Every call target of the operation, in order'),
    createdAt: z.string(),
  })
  .meta({ id: 'PaymasterUsageRecord' });

function toRecord(row: UsageRecordRow): z.infer<typeof usageRecord> {
  return {
    id: row.id,
    clientId: row.client_id,
    method: row.method,
    chainId: row.chain_id,
    mode: row.mode,
    status: row.status,
    reason: row.reason,
    sender: row.sender && getAddress(row.sender),
    entryPoint: row.entry_point && getAddress(row.entry_point),
    userOpHash: row.user_op_hash,
    targets: row.targets.map((address) => getAddress(address)),
    createdAt: row.created_at.toISOString(),
  };
}

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
            .object({ data: z.array(usageRecord), nextCursor: z.string().nullable() })
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
        return { status: 200, body: { data: rows.map(toRecord), nextCursor } };
      },
    }),
  ];
}
