import { sql, type Selectable } from 'kysely';
import { type Db, poolOf } from './client';
import { type GroupCommitStats, type GroupCommitter, groupCommitter } from './groupCommit';
import {
  type CounterConsumption,
  type HoldTerms,
  LIMIT_CONSUMPTION_PARAMETERS,
  type LimitConsumptionValues,
  limitConsumptionValues,
  releaseLimitHolds,
} from './paymasterLimits';
import { preparedStatement, runPrepared } from './preparedStatements';
import type {
  PaymasterUsageStatus,
  PaymasterUsageTable,
  SponsorshipMode,
  StoredPaymasterResult,
} from './schema';

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
  /** End of the signed paymaster data's validity (signed operations only). */
  validUntil?: Date | null;
  /** The ETH/USD snapshot when the operation was priced (decimal strings). */
  usdSnapshot?: { ethUsdPrice: string; estimatedGasCostWei: string; estimatedCostUsd: string };
  /** The sponsorship holds the operation's dollars are counted under (settled on receipt). */
  holdId?: string | null;
  /** The policy that sponsored the operation (signed rows). */
  policyId?: string | null;
}

/** A signed operation's row: its hash, what was answered, and the fingerprint of the signing request. */
export interface NewSignedUsageRecord extends NewUsageRecord {
  userOpHash: string;
  requestFingerprint: string;
  signedResult: StoredPaymasterResult;
}

export async function insertUsageRecord(db: Db, record: NewUsageRecord): Promise<UsageRecordRow> {
  return db
    .insertInto('paymaster_usage')
    .values(usageRowValues(record))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Records a signed operation unless its (chain, entry point, userOpHash) already has a row; undefined
 * then (a concurrent identical request won: the operation is recorded, limited and charged once).
 */
export async function insertSignedUsageRecord(
  db: Db,
  record: NewSignedUsageRecord,
): Promise<UsageRecordRow | undefined> {
  return db
    .insertInto('paymaster_usage')
    .values({
      ...usageRowValues(record),
      request_fingerprint: record.requestFingerprint,
      signed_result: JSON.stringify(record.signedResult),
    })
    .onConflict((conflict) =>
      conflict
        .columns(['chain_id', 'entry_point', 'user_op_hash'])
        .where('user_op_hash', 'is not', null)
        .doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** What recording a signed operation with its limits did. */
export type SignedOperationRecording =
  | { kind: 'recorded' }
  /** 0-based index of the consumption that denies the operation; nothing was taken or inserted. */
  | { kind: 'denied'; deniedAt: number }
  /** The operation already had its row (an identical request): nothing was taken; its stored answer. */
  | { kind: 'duplicate'; stored: StoredPaymasterResult };

/**
 * `record_signed_paymaster_operation` (migration 600), prepared: it runs once per signed answer. Its
 * result column keeps its name from migration 600 (`refused`): migrations are history.
 */
type RecordingRow = { denied: number; stored_result: StoredPaymasterResult | null };

const RECORD_SIGNED_OPERATION = preparedStatement<RecordingRow, [...LimitConsumptionValues, string]>(
  'record_signed_paymaster_operation_v1',
  `SELECT refused AS denied, stored_result FROM record_signed_paymaster_operation(${LIMIT_CONSUMPTION_PARAMETERS}, $10::jsonb)`,
);

/**
 * `record_signed_paymaster_operations` (migrations 2026_11_30_0100, 2026_12_01_0100), prepared: a batch of signed
 * operations recorded in one statement and one transaction, each as the single function records it,
 * one result row per operation in the batch's order.
 */
export const RECORD_SIGNED_OPERATIONS = preparedStatement<RecordingRow, BatchValues>(
  'record_signed_paymaster_operations_v2',
  `SELECT batch.refused AS denied, batch.stored_result
   FROM record_signed_paymaster_operations($1::integer[], $2::text[], $3::timestamptz[], $4::bigint[],
     $5::bigint[], $6::text[], $7::uuid[], $8::timestamptz[], $9::timestamptz[], $10::uuid[],
     ARRAY(SELECT usage.element FROM jsonb_array_elements($11::jsonb) WITH ORDINALITY AS usage(element, position)
       ORDER BY usage.position))
     WITH ORDINALITY AS batch(refused, stored_result, position)
   ORDER BY batch.position`,
);

/** One operation's recording as the statements take it: its consumption values and its usage row. */
export type SignedRecordingValues = [...LimitConsumptionValues, string];

type BatchValues = [
  consumptionItems: number[],
  counterKeys: string[],
  windowStarts: string[],
  amounts: string[],
  limits: string[],
  bases: string[],
  holdIds: string[],
  holdExpiresAts: string[],
  nows: string[],
  balanceMerchants: string[],
  /**
   * The usage rows as one JSON array: node-pg would escape each row's JSON into an array literal (every
   * quote) and Postgres parse it back; the statement takes the array's elements instead.
   */
  usages: string,
];

/**
 * At most this many operations per batch. Chosen when each recorded operation kept two subtransaction ids
 * until the batch committed (past 64 per transaction every backend's snapshots get slower); since
 * migration 2026_12_01_0100 a batch takes none, and the bound only caps how long a batch's answers wait.
 */
const MAX_BATCH = 30;

/** One group committer per pool (one per api process and database): db/groupCommit.ts. */
const committers = new WeakMap<object, GroupCommitter<SignedRecordingValues, RecordingRow>>();

function committerFor(db: Db, pool: object): GroupCommitter<SignedRecordingValues, RecordingRow> {
  let committer = committers.get(pool);
  if (!committer) {
    committer = groupCommitter<SignedRecordingValues, RecordingRow>({
      maxBatch: MAX_BATCH,
      runOne: async (values) => (await runPrepared(db, RECORD_SIGNED_OPERATION, values))[0]!,
      runBatch: (batch) => runPrepared(db, RECORD_SIGNED_OPERATIONS, batchValues(batch)),
    });
    committers.set(pool, committer);
  }
  return committer;
}

/** The batch as the statement's flat parallel arrays (each item's consumptions tagged 1-based). */
export function batchValues(batch: readonly SignedRecordingValues[]): BatchValues {
  const consumptions: [number[], string[], string[], string[], string[], string[]] = [[], [], [], [], [], []];
  const operations: [string[], string[], string[], string[], string[]] = [[], [], [], [], []];
  batch.forEach(
    ([keys, windowStarts, amounts, limits, bases, holdId, expiresAt, now, merchant, usage], index) => {
      for (let position = 0; position < keys.length; position++) {
        consumptions[0].push(index + 1);
        consumptions[1].push(keys[position]!);
        consumptions[2].push(windowStarts[position]!);
        consumptions[3].push(amounts[position]!);
        consumptions[4].push(limits[position]!);
        consumptions[5].push(bases[position]!);
      }
      operations[0].push(holdId);
      operations[1].push(expiresAt);
      operations[2].push(now);
      operations[3].push(merchant);
      operations[4].push(usage);
    },
  );
  const [holdIds, expiresAts, nows, merchants, usages] = operations;
  return [...consumptions, holdIds, expiresAts, nows, merchants, `[${usages.join(',')}]`];
}

/** The group committers' counts for this Db's pool (tests and benches), or undefined before any batch. */
export function signedRecordingStats(db: Db): GroupCommitStats | undefined {
  const pool = poolOf(db);
  return pool ? committers.get(pool)?.stats() : undefined;
}

/** One operation's recording as the statements take it: its consumption values and its usage row as JSON. */
export function signedRecordingValues(
  consumptions: readonly CounterConsumption[],
  hold: HoldTerms,
  record: NewSignedUsageRecord,
): SignedRecordingValues {
  const values = usageRowValues(record);
  const usage = {
    ...values,
    user_op_hash: record.userOpHash.toLowerCase(),
    entry_point: values.entry_point?.toLowerCase() ?? null,
    valid_until: values.valid_until?.toISOString() ?? null,
    request_fingerprint: record.requestFingerprint,
    signed_result: record.signedResult,
  };
  return [...limitConsumptionValues(consumptions, hold), JSON.stringify(usage)];
}

/**
 * Consumes the operation's limits and inserts its `submitted` row, all or nothing
 * (`record_signed_paymaster_operation`, migration 600): a denial takes and inserts nothing; an
 * operation that already has its row consumes nothing and answers the stored result. On a Db with its
 * own pool the recordings of concurrent answers are group-committed (one statement and one transaction
 * per batch; the promise settles once the batch committed); in a transaction it runs on its own.
 */
export async function recordSignedOperation(
  db: Db,
  consumptions: readonly CounterConsumption[],
  hold: HoldTerms,
  record: NewSignedUsageRecord,
): Promise<SignedOperationRecording> {
  const recording = signedRecordingValues(consumptions, hold, record);
  const pool = poolOf(db);
  const { denied, stored_result: stored } = pool
    ? await committerFor(db, pool).submit(recording)
    : (await runPrepared(db, RECORD_SIGNED_OPERATION, recording))[0]!;
  if (denied !== 0) return { kind: 'denied', deniedAt: denied - 1 };
  if (stored) return { kind: 'duplicate', stored: storedResultInSignerOrder(stored) };
  return { kind: 'recorded' };
}

/**
 * What an operation already signed answered, found by its signing request's fingerprint (before
 * signing) or its userOpHash (after), on the chain and entry point; undefined when there is none.
 */
export async function findSignedResult(
  db: Db,
  {
    chainId,
    entryPoint,
    ...key
  }: { chainId: number; entryPoint: string } & ({ requestFingerprint: string } | { userOpHash: string }),
): Promise<StoredPaymasterResult | undefined> {
  const row = await db
    .selectFrom('paymaster_usage')
    .select('signed_result')
    .where('chain_id', '=', chainId)
    .where('entry_point', '=', entryPoint.toLowerCase())
    .where((eb) =>
      'requestFingerprint' in key
        ? eb('request_fingerprint', '=', key.requestFingerprint)
        : eb('user_op_hash', '=', key.userOpHash.toLowerCase()),
    )
    .where('signed_result', 'is not', null)
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
  const stored = row?.signed_result;
  return stored ? storedResultInSignerOrder(stored) : undefined;
}

/** jsonb keeps no key order: a stored answer's fields in the order the signer's result has them. */
export function storedResultInSignerOrder(stored: StoredPaymasterResult): StoredPaymasterResult {
  return {
    paymaster: stored.paymaster,
    paymasterData: stored.paymasterData,
    paymasterVerificationGasLimit: stored.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: stored.paymasterPostOpGasLimit,
  };
}

function usageRowValues(record: NewUsageRecord) {
  return {
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
    valid_until: record.validUntil ?? null,
    eth_usd_price: record.usdSnapshot?.ethUsdPrice ?? null,
    estimated_gas_cost_wei: record.usdSnapshot?.estimatedGasCostWei ?? null,
    estimated_cost_usd: record.usdSnapshot?.estimatedCostUsd ?? null,
    hold_id: record.holdId ?? null,
    policy_id: record.policyId ?? null,
  };
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

/** What the EntryPoint's UserOperationEvent reported about one operation. */
export interface UserOperationReceipt {
  chainId: number;
  /** Lower-case EntryPoint address the event came from. */
  entryPoint: string;
  userOpHash: string;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  txHash: string;
  blockNumber: bigint;
}

/**
 * Moves the operation's usage rows to `onchain_success` / `onchain_reverted` with the event's figures.
 * Idempotent: a row that already has its receipt is left alone. A `dropped` row is corrected too (the
 * chain is the truth if the tracker lagged behind the sweep). Returns the rows changed.
 */
export async function recordUserOperationReceipt(db: Db, receipt: UserOperationReceipt): Promise<number> {
  const result = await db
    .updateTable('paymaster_usage')
    .set({
      status: receipt.success ? 'onchain_success' : 'onchain_reverted',
      actual_gas_cost: receipt.actualGasCost.toString(),
      actual_gas_used: receipt.actualGasUsed.toString(),
      tx_hash: receipt.txHash.toLowerCase(),
      block_number: receipt.blockNumber,
    })
    .where('chain_id', '=', receipt.chainId)
    .where('user_op_hash', '=', receipt.userOpHash.toLowerCase())
    .where('entry_point', '=', receipt.entryPoint.toLowerCase())
    .where('status', 'in', ['submitted', 'dropped'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * `submitted` rows of the chain whose paymaster data expired before `validBefore` become `dropped`, and
 * their sponsorship holds are deleted (they stopped counting at validUntil already), in one transaction.
 * The receipt tracker drops the whole chain's; `merchantId` narrows it to one merchant's rows (what a test
 * on the shared database may touch without dropping its neighbours' operations).
 */
export async function markDroppedOperations(
  db: Db,
  { chainId, validBefore, merchantId }: { chainId: number; validBefore: Date; merchantId?: string },
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const dropped = await trx
      .updateTable('paymaster_usage')
      .set({ status: 'dropped' })
      .where('chain_id', '=', chainId)
      .where('status', '=', 'submitted')
      .where('valid_until', '<', validBefore)
      .$if(merchantId !== undefined, (query) => query.where('merchant_id', '=', merchantId!))
      .returning('hold_id as held')
      .execute();
    await releaseLimitHolds(
      trx,
      dropped.flatMap(({ held }) => (held === null ? [] : [held])),
    );
    return dropped.length;
  });
}

/** The merchant's signed operations (rows with a userOpHash), newest first. */
export async function listRecentOperations(
  db: Db,
  { merchantId, limit }: { merchantId: string; limit: number },
): Promise<UsageRecordRow[]> {
  return db
    .selectFrom('paymaster_usage')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('user_op_hash', 'is not', null)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}

export interface UsageTally {
  status: PaymasterUsageStatus;
  mode: SponsorshipMode | null;
  count: number;
  /** Sum of actualGasCost in wei, decimal string ("0" when none). */
  gasCostWei: string;
}

/** Row counts and gas spent per (status, mode) of the merchant's rows created at or after `since`. */
export async function tallyUsage(
  db: Db,
  { merchantId, since }: { merchantId: string; since?: Date },
): Promise<UsageTally[]> {
  let query = db
    .selectFrom('paymaster_usage')
    .select([
      'status',
      'mode',
      sql<string>`count(*)`.as('count'),
      sql<string>`coalesce(sum(actual_gas_cost), 0)::text`.as('gas_cost_wei'),
    ])
    .where('merchant_id', '=', merchantId);
  if (since !== undefined) query = query.where('created_at', '>=', since);
  const rows = await query.groupBy(['status', 'mode']).execute();
  return rows.map((row) => ({
    status: row.status,
    mode: row.mode,
    count: Number(row.count),
    gasCostWei: row.gas_cost_wei,
  }));
}
