import { sql, type Kysely } from 'kysely';

/**
 * Group commit of signed answers (issue 46): `record_signed_paymaster_operations` records a batch of
 * signed operations in one statement and one transaction, each exactly as
 * `record_signed_paymaster_operation` (migration 0901) records one, in the batch's order, and answers one
 * row per operation (its `refused` position or stored result). A refused operation takes nothing and does
 * not fail its neighbours (a refusal is an answer, not an error); the api answers no request of the batch
 * before the batch commits (db/signedOperationBatches.ts).
 *
 * Lock order: the transaction holds every counter it touched until commit, so it first inserts and locks
 * all the batch's counters at once in one global order that agrees with the order every single operation
 * locks its own (paymaster/limits/limitRules.ts `countedRules`, reservation first): prepaid reservation,
 * platform budget, merchant share, merchant cap, client cap, then the per-account counters by account
 * (its USD counter before its operations counter), then the rest (policy budgets) by key. Two batches
 * then never wait on each other in a cycle, nor a batch and a single operation's limits. A single
 * operation locks a policy's budgets in the policy's order, which the key order may not follow: the api
 * sends a batch that Postgres aborts as a deadlock again (db/groupCommit.ts).
 *
 * The batch's consumptions come as flat parallel arrays with the 1-based item each belongs to (an item's
 * consumptions contiguous, in its own order); the per-item arrays are the hold terms and usage rows.
 */
export const recordBatch = `
    CREATE FUNCTION record_signed_paymaster_operations(
      consumption_items integer[],
      counter_keys text[],
      window_starts timestamptz[],
      amounts bigint[],
      limits bigint[],
      bases text[],
      holds uuid[],
      hold_expires_ats timestamptz[],
      now_ats timestamptz[],
      balance_merchants uuid[],
      usages jsonb[],
      OUT refused integer,
      OUT stored_result jsonb
    )
    RETURNS SETOF record
    LANGUAGE plpgsql AS $$
    DECLARE
      item integer;
      first_position integer;
      next_position integer := 1;
      consumptions integer := coalesce(cardinality(counter_keys), 0);
      recorded record;
    BEGIN
      -- A new counter has no holds yet: nothing before the batch's earliest now can have expired on it.
      INSERT INTO paymaster_limit_counters (counter_key, window_start, used, held, expired_until)
      SELECT wanted.counter_key, wanted.window_start, 0, 0, min(now_ats[wanted.item])
      FROM unnest(counter_keys, window_starts, consumption_items) AS wanted(counter_key, window_start, item)
      GROUP BY wanted.counter_key, wanted.window_start
      ORDER BY paymaster_counter_lock_rank(wanted.counter_key), paymaster_counter_lock_key(wanted.counter_key),
        wanted.window_start
      ON CONFLICT (counter_key, window_start) DO NOTHING;
      PERFORM 1 FROM paymaster_limit_counters AS counter
      JOIN (
        SELECT DISTINCT w.counter_key, w.window_start FROM unnest(counter_keys, window_starts) AS w(counter_key, window_start)
      ) AS wanted USING (counter_key, window_start)
      ORDER BY paymaster_counter_lock_rank(counter.counter_key), paymaster_counter_lock_key(counter.counter_key),
        counter.window_start
      FOR UPDATE OF counter;

      FOR item IN 1 .. coalesce(cardinality(usages), 0) LOOP
        first_position := next_position;
        WHILE next_position <= consumptions AND consumption_items[next_position] = item LOOP
          next_position := next_position + 1;
        END LOOP;
        SELECT one.refused, one.stored_result INTO recorded
        FROM record_signed_paymaster_operation(
          counter_keys[first_position : next_position - 1],
          window_starts[first_position : next_position - 1],
          amounts[first_position : next_position - 1],
          limits[first_position : next_position - 1],
          bases[first_position : next_position - 1],
          holds[item], hold_expires_ats[item], now_ats[item], balance_merchants[item], usages[item]
        ) AS one;
        refused := recorded.refused;
        stored_result := recorded.stored_result;
        RETURN NEXT;
      END LOOP;
    END
    $$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  // The global lock order of the counters (see above), in the order countedRules consumes them.
  await sql`
    CREATE FUNCTION paymaster_counter_lock_rank(counter_key text) RETURNS integer
    LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE split_part(counter_key, ':', 1)
        WHEN 'prepaid_reserved' THEN 1
        WHEN 'platform_budget_usd' THEN 2
        WHEN 'merchant_budget_usd' THEN 3
        WHEN 'merchant_usd' THEN 4
        WHEN 'client_usd' THEN 5
        WHEN 'sender_usd' THEN 6
        WHEN 'sender_ops' THEN 6
        ELSE 7
      END
    $$`.execute(db);
  // Within the per-account rank: by merchant and account, the USD counter before the operations one.
  await sql`
    CREATE FUNCTION paymaster_counter_lock_key(counter_key text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE split_part(counter_key, ':', 1)
        WHEN 'sender_usd' THEN substr(counter_key, strpos(counter_key, ':') + 1) || ':0'
        WHEN 'sender_ops' THEN substr(counter_key, strpos(counter_key, ':') + 1) || ':1'
        ELSE counter_key
      END
    $$`.execute(db);
  await sql.raw(recordBatch).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION record_signed_paymaster_operations(integer[], text[], timestamptz[], bigint[], bigint[],
    text[], uuid[], timestamptz[], timestamptz[], uuid[], jsonb[])`.execute(db);
  await sql`DROP FUNCTION paymaster_counter_lock_key(text)`.execute(db);
  await sql`DROP FUNCTION paymaster_counter_lock_rank(text)`.execute(db);
}
