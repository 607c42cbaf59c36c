import { sql, type Kysely } from 'kysely';
import { recordBatchWithRowsPerStatement } from './2026_12_03_0100_record_signed_rows_per_batch';

/**
 * The batch's earliest hold expiry read only up to its latest `now` (issue 46, growth with traffic).
 *
 * `record_signed_paymaster_batch` skips its expiry scans until an operation's now reaches the earliest
 * expiry of a hold after its counters' `expired_until`. It read that minimum over every later hold: every
 * signed operation still within its validUntil, about ten minutes of traffic. Postgres answers such a
 * minimum from the first entry of the expires_at index only when its statistics say the table is large;
 * analysed at a quiet moment (a table that churns, emptied by settlements), it planned a bitmap scan that
 * read all of them, for every batch: 15 ms a batch with 40,000 live holds, where the index answers in
 * 0.02 ms. No operation's now passes the batch's latest one, so a hold expiring after it never changes a
 * decision: the minimum is now read over the holds that expired between the counters' `expired_until` and
 * that latest now (those not yet counted off), whatever the plan, and 'infinity' when there are none, as
 * before when nothing had expired.
 */
const UNBOUNDED_NEXT_EXPIRY = `SELECT coalesce(min(h.expires_at), 'infinity') INTO next_expiry FROM paymaster_operation_holds AS h
        WHERE h.expires_at > (SELECT min(locked_until) FROM unnest(slot_expired_until) AS locked_until);`;

const NEXT_EXPIRY_UP_TO_LATEST_NOW = `SELECT coalesce(min(h.expires_at), 'infinity') INTO next_expiry FROM paymaster_operation_holds AS h
        WHERE h.expires_at > (SELECT min(locked_until) FROM unnest(slot_expired_until) AS locked_until)
          AND h.expires_at <= (SELECT max(item_now) FROM unnest(now_ats) AS item_now);`;

/** The function of migration 2026_12_03_0100 with that one statement bounded. */
export const recordBatchWithBoundedExpiry = (() => {
  if (recordBatchWithRowsPerStatement.split(UNBOUNDED_NEXT_EXPIRY).length !== 2)
    throw new Error(
      'migration 2026_12_04_0100: the next-expiry statement of 2026_12_03_0100 was not found once',
    );
  return recordBatchWithRowsPerStatement.replace(UNBOUNDED_NEXT_EXPIRY, NEXT_EXPIRY_UP_TO_LATEST_NOW);
})();

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(recordBatchWithBoundedExpiry).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw(recordBatchWithRowsPerStatement).execute(db);
}
