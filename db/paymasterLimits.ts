import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { PaymasterMerchantLimitsTable } from './schema';

/**
 * Sponsorship limits: the merchant's own values and the windowed counters they are consumed from.
 * A counter is consumed with one conditional upsert, so concurrent requests can never push it past
 * its limit: the row lock serialises them and the `WHERE` refuses the one that would overshoot.
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

/**
 * Adds `amount` to the counter when the total stays within `limit`; true when consumed. One statement:
 * the first request of a window inserts, later ones update under the row lock with the limit re-checked.
 */
export async function consumeLimitCounter(
  db: Db,
  counter: LimitCounter,
  { amount, limit }: { amount: bigint; limit: bigint },
): Promise<boolean> {
  const result = await sql<{ used: string }>`
    INSERT INTO paymaster_limit_counters AS counter (counter_key, window_start, used)
    SELECT ${counter.key}, ${counter.windowStart}, ${amount.toString()}::bigint
    WHERE ${amount.toString()}::bigint <= ${limit.toString()}::bigint
    ON CONFLICT (counter_key, window_start)
    DO UPDATE SET used = counter.used + excluded.used
    WHERE counter.used + excluded.used <= ${limit.toString()}::bigint
    RETURNING used`.execute(db);
  return result.rows.length === 1;
}

/** Gives back what `consumeLimitCounter` took (the operation was not signed after all). */
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
