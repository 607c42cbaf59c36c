import type { Selectable } from 'kysely';
import type { Db } from './client';
import type { PaymasterUsageStatus, PaymasterUsageTable, SponsorshipMode } from './schema';

/** One row per paymaster decision: every denial with its `denied_*` status, every signed operation. */
export type UsageRecordRow = Selectable<PaymasterUsageTable>;

export interface NewUsageRecord {
  merchantId: string;
  clientId: string;
  method: string | null;
  chainId: number | null;
  mode: SponsorshipMode | null;
  status: PaymasterUsageStatus;
  reason: string | null;
  sender: string | null;
  entryPoint: string | null;
  userOpHash: string | null;
  targets: string[];
}

export async function insertUsageRecord(db: Db, record: NewUsageRecord): Promise<UsageRecordRow> {
  return db
    .insertInto('paymaster_usage')
    .values({
      merchant_id: record.merchantId,
      client_id: record.clientId,
      method: record.method,
      chain_id: record.chainId,
      mode: record.mode,
      status: record.status,
      reason: record.reason,
      sender: record.sender,
      entry_point: record.entryPoint,
      user_op_hash: record.userOpHash,
      targets: record.targets,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface UsageRecordFilter {
  merchantId: string;
  clientId?: string;
  chainId?: number;
  mode?: SponsorshipMode;
  status?: PaymasterUsageStatus;
  /** Only rows older than this position (the `seq` of the previous page's last row). */
  beforeSeq?: string;
  limit: number;
}

/** The merchant's usage rows, newest first; `hasMore` tells whether another page follows. */
export async function listUsageRecords(
  db: Db,
  filter: UsageRecordFilter,
): Promise<{ rows: UsageRecordRow[]; hasMore: boolean }> {
  let query = db.selectFrom('paymaster_usage').selectAll().where('merchant_id', '=', filter.merchantId);
  if (filter.clientId !== undefined) query = query.where('client_id', '=', filter.clientId);
  if (filter.chainId !== undefined) query = query.where('chain_id', '=', filter.chainId);
  if (filter.mode !== undefined) query = query.where('mode', '=', filter.mode);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.beforeSeq !== undefined) query = query.where('seq', '<', filter.beforeSeq as never);
  const rows = await query
    .orderBy('seq', 'desc')
    .limit(filter.limit + 1)
    .execute();
  return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
}
