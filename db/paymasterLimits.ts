import { sql, type RawBuilder, type Selectable } from 'kysely';
import { type Db, poolOf } from './client';
import { type GroupCommitStats, type GroupCommitter, groupCommitter } from './groupCommit';
import { preparedStatement, runPrepared } from './preparedStatements';
import type { PaymasterMerchantLimitsTable } from './schema';

/**
 * Sponsorship limits: the merchant's own values and the windowed counters they are consumed from.
 * Operation counts are consumed at signing; dollar amounts are held until the paymaster data's
 * validUntil and settled at their actual value on receipt (migration 202; one hold row per operation,
 * migration 960). Every change to a counter
 * happens under its row lock, so concurrent requests can never push it past its limit.
 */
export type MerchantLimitsRow = Selectable<PaymasterMerchantLimitsTable>;

/** The merchant's own limits, as columns of `paymaster_merchant_limits` (listed once: reads pick these). */
export const MERCHANT_LIMIT_COLUMNS = [
  'per_sender_hourly_ops',
  'per_sender_daily_usd',
  'per_tx_usd',
  'per_merchant_daily_usd',
  'per_client_daily_usd',
] as const;

export type MerchantLimitColumns = Pick<MerchantLimitsRow, (typeof MERCHANT_LIMIT_COLUMNS)[number]>;

export interface MerchantLimitsValues {
  perSenderHourlyOps: number | null;
  /** Decimal USD strings. */
  perSenderDailyUsd: string | null;
  perTxUsd: string | null;
  perMerchantDailyUsd: string | null;
  perClientDailyUsd: string | null;
}

export async function findMerchantLimits(db: Db, merchantId: string): Promise<MerchantLimitsRow | undefined> {
  return db
    .selectFrom('paymaster_merchant_limits')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/**
 * Writes the given limits of the merchant (null clears one; a key left out keeps its stored value) in
 * one upsert statement, and returns the row. Only the given columns are set, so two concurrent PATCHes
 * of different limits both land: nothing is read and written back.
 */
export async function saveMerchantLimits(
  db: Db,
  merchantId: string,
  values: Partial<MerchantLimitsValues>,
): Promise<MerchantLimitsRow> {
  const given = Object.fromEntries(
    Object.entries({
      per_sender_hourly_ops: values.perSenderHourlyOps,
      per_sender_daily_usd: values.perSenderDailyUsd,
      per_tx_usd: values.perTxUsd,
      per_merchant_daily_usd: values.perMerchantDailyUsd,
      per_client_daily_usd: values.perClientDailyUsd,
    }).filter(([, value]) => value !== undefined),
  );
  return db
    .insertInto('paymaster_merchant_limits')
    .values({ merchant_id: merchantId, ...given })
    .onConflict((conflict) =>
      conflict.column('merchant_id').doUpdateSet({ ...given, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface LimitCounter {
  /** Which limit and whose (e.g. `sender_ops:<merchant>:<sender>`). */
  key: string;
  windowStart: Date;
}

/** The window of counters that never reset (the prepaid balance reservation). */
const NO_WINDOW = new Date(0);

/**
 * The merchant's prepaid balance reservation: what signed operations (and queued vault deploys) hold
 * against the running balance until they are charged or released.
 */
export const prepaidReservationCounter = (merchantId: string): LimitCounter => ({
  key: `prepaid_reserved:${merchantId}`,
  windowStart: NO_WINDOW,
});

/**
 * How a consumption counts: `ops` is consumed at once; `cost` and `charged` (micro-dollars without and
 * with markup) are held until the hold expires and settled at the actual value on receipt;
 * `reservation` is held against the merchant's running prepaid balance instead of a limit.
 */
export type ConsumptionBasis = 'ops' | 'cost' | 'charged' | 'reservation';

export interface CounterConsumption {
  counter: LimitCounter;
  amount: bigint;
  /** Ignored for `reservation` (the balance is the limit). */
  limit: bigint;
  basis: ConsumptionBasis;
}

export interface HoldTerms {
  holdId: string;
  /** The paymaster data's validUntil: the holds stop counting then. */
  expiresAt: Date;
  /** The caller's clock: holds that expired by then are released first. */
  now: Date;
  /** Whose prepaid balance a `reservation` is held against. */
  merchantId: string;
}

/**
 * Consumes and holds, all or nothing, in the given order (`consume_paymaster_limits`, one round trip):
 * under the row locks no concurrent request can push a counter past its limit. Returns the index of the
 * first denied consumption, or undefined when all were taken.
 */
export function consumeSponsorshipLimits(
  db: Db,
  consumptions: readonly CounterConsumption[],
  hold: HoldTerms,
): Promise<number | undefined> {
  return callLimitsFunction(db, 'consume_paymaster_limits', consumptions, hold);
}

/**
 * Which consumption would deny the operation, without taking anything (`try_paymaster_limits`: the same
 * consumption, rolled back at once). Undefined when all would be taken now.
 */
export function trySponsorshipLimits(
  db: Db,
  consumptions: readonly CounterConsumption[],
  hold: HoldTerms,
): Promise<number | undefined> {
  return callLimitsFunction(db, 'try_paymaster_limits', consumptions, hold);
}

/**
 * The arguments every limit-consuming SQL function starts with (`consume_paymaster_limits`,
 * `try_paymaster_limits`, `record_signed_paymaster_operation`): the consumptions as parallel arrays,
 * then the hold's terms. As `$1`–`$9` of a prepared statement (LIMIT_CONSUMPTION_PARAMETERS) or as
 * Kysely arguments (limitConsumptionArguments).
 */
export type LimitConsumptionValues = [
  counterKeys: string[],
  windowStarts: string[],
  amounts: string[],
  limits: string[],
  bases: ConsumptionBasis[],
  holdId: string,
  holdExpiresAt: string,
  now: string,
  balanceMerchant: string,
];

export const LIMIT_CONSUMPTION_PARAMETERS =
  '$1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::text[], $6::uuid, $7::timestamptz, $8::timestamptz, $9::uuid';

export function limitConsumptionValues(
  consumptions: readonly CounterConsumption[],
  hold: HoldTerms,
): LimitConsumptionValues {
  return [
    consumptions.map(({ counter }) => counter.key),
    consumptions.map(({ counter }) => counter.windowStart.toISOString()),
    consumptions.map(({ amount }) => amount.toString()),
    consumptions.map(({ limit }) => limit.toString()),
    consumptions.map(({ basis }) => basis),
    hold.holdId,
    hold.expiresAt.toISOString(),
    hold.now.toISOString(),
    hold.merchantId,
  ];
}

export function limitConsumptionArguments(
  consumptions: readonly CounterConsumption[],
  hold: HoldTerms,
): RawBuilder<unknown> {
  const [keys, windowStarts, amounts, limits, bases, holdId, expiresAt, now, merchantId] =
    limitConsumptionValues(consumptions, hold);
  return sql.join([
    sql`${keys}::text[]`,
    sql`${windowStarts}::timestamptz[]`,
    sql`${amounts}::bigint[]`,
    sql`${limits}::bigint[]`,
    sql`${bases}::text[]`,
    sql`${holdId}::uuid`,
    sql`${expiresAt}::timestamptz`,
    sql`${now}::timestamptz`,
    sql`${merchantId}::uuid`,
  ]);
}

/** Both functions take the same arguments and answer the 1-based index of the denial, 0 for none. */
async function callLimitsFunction(
  db: Db,
  name: 'consume_paymaster_limits' | 'try_paymaster_limits',
  consumptions: readonly CounterConsumption[],
  hold: HoldTerms,
): Promise<number | undefined> {
  if (consumptions.length === 0) return undefined;
  const { rows } = await sql<{ denied: number }>`
    SELECT ${sql.raw(name)}(${limitConsumptionArguments(consumptions, hold)}) AS denied`.execute(db);
  const denied = rows[0]!.denied;
  return denied === 0 ? undefined : denied - 1;
}

/** Gives back every hold of these operations (never signed, or never included): they stop counting. */
export async function releaseLimitHolds(db: Db, holdIds: readonly string[]): Promise<void> {
  if (holdIds.length === 0) return;
  await sql`SELECT release_paymaster_limit_holds(${holdIds}::uuid[])`.execute(db);
}

/** The operation was included: its holds become its actual cost (micro-dollars, without and with markup). */
export async function settleLimitHold(
  db: Db,
  holdId: string,
  { costMicro, chargedMicro }: { costMicro: bigint; chargedMicro: bigint },
): Promise<void> {
  await sql`SELECT settle_paymaster_limit_hold(${holdId}::uuid, ${costMicro.toString()}::bigint, ${chargedMicro.toString()}::bigint)`.execute(
    db,
  );
}

/**
 * What each counter has taken in its window as of `now`: consumed or settled amounts plus holds that
 * have not expired (0 for a counter without a row), in the given order. On a Db with its own pool the reads
 * of concurrent callers go to Postgres together (db/groupCommit.ts: those that arrive while one read is in
 * flight, or in the same turn of the event loop, are one statement): stub data reads the counters once per
 * answer, and Postgres' cost per statement was most of the read's. In a transaction it runs on its own.
 */
export async function limitCountersUsage(
  db: Db,
  counters: readonly LimitCounter[],
  now: Date,
): Promise<bigint[]> {
  if (counters.length === 0) return [];
  const read: CounterRead = {
    keys: counters.map((counter) => counter.key),
    windowStarts: counters.map((counter) => counter.windowStart.toISOString()),
    now: now.toISOString(),
  };
  const pool = poolOf(db);
  return pool ? counterReaderFor(db, pool).submit(read) : readCountersAlone(db, read);
}

/** The group reader's counts for this Db's pool (tests and benches), or undefined before any read. */
export function counterReadStats(db: Db): GroupCommitStats | undefined {
  const pool = poolOf(db);
  return pool ? counterReaders.get(pool)?.stats() : undefined;
}

/** One caller's read: its counters, as the statements take them, and its now. */
interface CounterRead {
  keys: string[];
  windowStarts: string[];
  now: string;
}

/**
 * Every caller's counters in order, each with its own now (a read alone is a batch of one). `held` counts
 * the holds that had not expired by the counter's expired_until (migration 960); those that expired since,
 * up to the read's now, no longer count. Prepared: parsing and planning it were about 30 % of what
 * Postgres spent per stub answer when each answer sent its own (issue 46).
 */
const LIMIT_COUNTERS_USAGE = preparedStatement<
  { usage: string },
  [counterKeys: string[], windowStarts: string[], nows: string[]]
>(
  'limit_counters_usage_v3',
  `SELECT coalesce(counter.used + counter.held - coalesce((
     SELECT sum(h.amounts[i]) FROM paymaster_operation_holds AS h, generate_subscripts(h.counter_keys, 1) AS i
     WHERE h.expires_at > counter.expired_until AND h.expires_at <= wanted.now_at
       AND h.counter_keys[i] = wanted.counter_key AND h.window_starts[i] = wanted.window_start
   ), 0), 0)::text AS usage
   FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY
     AS wanted(counter_key, window_start, now_at, position)
   LEFT JOIN paymaster_limit_counters AS counter USING (counter_key, window_start)
   ORDER BY wanted.position`,
);

async function readCountersAlone(db: Db, read: CounterRead): Promise<bigint[]> {
  return (await readCountersTogether(db, [read]))[0]!;
}

async function readCountersTogether(db: Db, reads: readonly CounterRead[]): Promise<bigint[][]> {
  const rows = await runPrepared(db, LIMIT_COUNTERS_USAGE, [
    reads.flatMap((read) => read.keys),
    reads.flatMap((read) => read.windowStarts),
    reads.flatMap((read) => read.keys.map(() => read.now)),
  ]);
  let from = 0;
  return reads.map((read) => {
    const usage = rows.slice(from, from + read.keys.length).map((row) => BigInt(row.usage));
    from += read.keys.length;
    return usage;
  });
}

/** At most this many callers' reads per statement (each a handful of counters). */
const MAX_READS_PER_BATCH = 64;

/** One group reader per pool (one per api process and database). */
const counterReaders = new WeakMap<object, GroupCommitter<CounterRead, bigint[]>>();

function counterReaderFor(db: Db, pool: object): GroupCommitter<CounterRead, bigint[]> {
  let reader = counterReaders.get(pool);
  if (!reader) {
    reader = groupCommitter<CounterRead, bigint[]>({
      maxBatch: MAX_READS_PER_BATCH,
      runOne: (read) => readCountersAlone(db, read),
      runBatch: (reads) => readCountersTogether(db, reads),
    });
    counterReaders.set(pool, reader);
  }
  return reader;
}

/** Gives back consumed operations (`ops`; the operation was not signed after all). */
export async function releaseLimitCounter(db: Db, counter: LimitCounter, amount: bigint): Promise<void> {
  await sql`
    UPDATE paymaster_limit_counters
    SET used = greatest(used - ${amount.toString()}::bigint, 0)
    WHERE counter_key = ${counter.key} AND window_start = ${counter.windowStart}`.execute(db);
}
