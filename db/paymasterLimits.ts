import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { PaymasterMerchantLimitsTable } from './schema';

/**
 * Sponsorship limits: the merchant's own values and the windowed counters they are consumed from.
 * A counter is consumed with a conditional upsert, so concurrent requests can never push it past its
 * limit: the row lock serialises them and the `WHERE` refuses the one that would overshoot.
 */
export type MerchantLimitsRow = Selectable<PaymasterMerchantLimitsTable>;

export interface MerchantLimitsValues {
  perSenderHourlyOps: number | null;
  /** Decimal USD strings. */
  perSenderDailyUsd: string | null;
  perTxUsd: string | null;
}

export async function findMerchantLimits(db: Db, merchantId: string): Promise<MerchantLimitsRow | undefined> {
  return db
    .selectFrom('paymaster_merchant_limits')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** Writes the merchant's limits (all three; null clears one) and returns the row. */
export async function saveMerchantLimits(
  db: Db,
  merchantId: string,
  values: MerchantLimitsValues,
): Promise<MerchantLimitsRow> {
  const columns = {
    per_sender_hourly_ops: values.perSenderHourlyOps,
    per_sender_daily_usd: values.perSenderDailyUsd,
    per_tx_usd: values.perTxUsd,
  };
  return db
    .insertInto('paymaster_merchant_limits')
    .values({ merchant_id: merchantId, ...columns })
    .onConflict((conflict) =>
      conflict.column('merchant_id').doUpdateSet({ ...columns, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface LimitCounter {
  /** Which limit and whose (e.g. `sender_ops:<merchant>:<sender>`). */
  key: string;
  windowStart: Date;
}

export interface CounterConsumption {
  counter: LimitCounter;
  amount: bigint;
  limit: bigint;
}

/**
 * Adds each amount to its counter when every total stays within its limit, all or nothing, in one
 * statement (`consume_paymaster_limit_counters`, migration 090): under the row locks no concurrent
 * request can push a counter past its limit. Returns the index of the first refused consumption, or
 * undefined when all were consumed.
 */
export async function consumeLimitCounters(
  db: Db,
  consumptions: readonly CounterConsumption[],
): Promise<number | undefined> {
  if (consumptions.length === 0) return undefined;
  const { rows } = await sql<{ refused: number }>`
    SELECT consume_paymaster_limit_counters(
      ${consumptions.map(({ counter }) => counter.key)}::text[],
      ${consumptions.map(({ counter }) => counter.windowStart.toISOString())}::timestamptz[],
      ${consumptions.map(({ amount }) => amount.toString())}::bigint[],
      ${consumptions.map(({ limit }) => limit.toString())}::bigint[]
    ) AS refused`.execute(db);
  const refused = rows[0]!.refused;
  return refused === 0 ? undefined : refused - 1;
}

/** Gives back what `consumeLimitCounters` took (the operation was not signed after all). */
export async function releaseLimitCounter(db: Db, counter: LimitCounter, amount: bigint): Promise<void> {
  await sql`
    UPDATE paymaster_limit_counters
    SET used = greatest(used - ${amount.toString()}::bigint, 0)
    WHERE counter_key = ${counter.key} AND window_start = ${counter.windowStart}`.execute(db);
}

/** What the counter has consumed in its window (0 when nothing yet). */
export async function limitCounterUsage(db: Db, counter: LimitCounter): Promise<bigint> {
  const row = await db
    .selectFrom('paymaster_limit_counters')
    .select('used')
    .where('counter_key', '=', counter.key)
    .where('window_start', '=', counter.windowStart)
    .executeTakeFirst();
  return row ? BigInt(row.used) : 0n;
}
