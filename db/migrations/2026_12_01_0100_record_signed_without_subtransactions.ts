import { sql, type Kysely } from 'kysely';
import { recordWithRepeat } from './2026_11_29_0901_signed_repeat_in_record';
import { recordBatch } from './2026_11_30_0100_record_signed_operations_batch';

/**
 * Recording signed operations without a subtransaction per operation (issue 46, "profile again"): the
 * batch of migration 2026_11_30_0100 ran, per operation, `record_signed_paymaster_operation` inside a
 * BEGIN … EXCEPTION block and `consume_paymaster_limits` inside another (two subtransactions, each with its
 * own subxid once it wrote), and updated each of its counters once more: a batch of 30 answers wrote 180
 * versions of the same six counter rows. `record_signed_paymaster_batch` answers the same, item by item in
 * the batch's order, with the counters read once under their locks and kept in arrays:
 *
 * 1. The counters are created, locked and read once for the batch: in the global lock order of migration
 *    2026_11_30_0100 for a batch, in consumption order for a single operation (the order
 *    `consume_paymaster_limits` locks in, so neither waits on the other in a cycle).
 * 2. Per operation: its repeat by request fingerprint answers the stored result, consuming nothing. Its
 *    consumptions are then checked in its order against the counters' values as the batch's earlier
 *    operations left them, exactly as `consume_paymaster_limits` checks them (expired holds taken out of
 *    `held` up to its now; the prepaid balance read under FOR SHARE), on copies: a refusal keeps nothing
 *    of the operation, as the rolled-back subtransaction did. The scan for expired holds runs only once a
 *    now reaches the earliest expiry of any hold after the earliest of the counters' expired_until (read
 *    once, lowered by the holds the batch adds): before it, none of theirs can have expired.
 * 3. A refused operation answers the stored result when its userOpHash is already recorded (the repeat
 *    check came before the limits), else its refused position. An operation the limits allow inserts its
 *    usage row with ON CONFLICT DO NOTHING: the unique (chain, entry point, userOpHash) index waits for a
 *    concurrent identical request's transaction, as before; when that row exists the operation answers
 *    its stored result and its copies are dropped (nothing consumed), else its hold row is inserted (where
 *    a later operation's expiry scan sees it) and its copies become the counters' values.
 * 4. The counters are written once, at the end.
 *
 * Every check reads what the subtransactions' version read (the counters are locked by this transaction
 * from step 1 to commit; a release or settle locks them before it touches a hold), so the answers, the
 * rows and the counters are the same. `record_signed_paymaster_operation` keeps its signature and answer
 * and records its one operation through the same function; `consume_paymaster_limits` is unchanged for
 * its other callers.
 */
export const recordBatchCore = `
    CREATE FUNCTION record_signed_paymaster_batch(
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
      lock_in_consumption_order boolean,
      OUT refused integer,
      OUT stored_result jsonb
    )
    RETURNS SETOF record
    LANGUAGE plpgsql AS $$
    DECLARE
      item integer;
      first_position integer;
      next_position integer := 1;
      consumption integer;
      slot integer;
      consumption_count integer := coalesce(cardinality(counter_keys), 0);
      -- Each consumption's counter (its slot); per slot, the counter's values as the batch leaves them.
      position_slots integer[];
      slot_keys text[];
      slot_windows timestamptz[];
      slot_earliest_nows timestamptz[];
      slot_used bigint[];
      slot_held bigint[];
      slot_expired_until timestamptz[];
      -- The current operation's copies of the slots' values.
      item_used bigint[];
      item_held bigint[];
      item_expired_until timestamptz[];
      held_positions integer[];
      held_keys text[];
      held_windows timestamptz[];
      held_amounts bigint[];
      held_bases text[];
      frontier timestamptz;
      next_expiry timestamptz := 'infinity';
      expired bigint;
      allowed numeric;
      usage jsonb;
      row_chain integer;
      row_entry_point text;
      row_hash text;
      row_fingerprint text;
    BEGIN
      IF consumption_count > 0 THEN
        -- The batch's counters (slots) in lock order, each with the earliest now of the items taking it.
        SELECT array_agg(wanted.counter_key ORDER BY wanted.slot), array_agg(wanted.window_start ORDER BY wanted.slot),
          array_agg(wanted.earliest_now ORDER BY wanted.slot)
        INTO slot_keys, slot_windows, slot_earliest_nows
        FROM (
          SELECT w.counter_key, w.window_start, min(now_ats[w.item]) AS earliest_now, row_number() OVER (
              ORDER BY CASE WHEN lock_in_consumption_order THEN min(w.position) END,
                paymaster_counter_lock_rank(w.counter_key), paymaster_counter_lock_key(w.counter_key),
                w.window_start
            ) AS slot
          FROM unnest(counter_keys, window_starts, consumption_items) WITH ORDINALITY
            AS w(counter_key, window_start, item, position)
          GROUP BY w.counter_key, w.window_start
        ) AS wanted;
        IF lock_in_consumption_order AND cardinality(slot_keys) = consumption_count THEN
          -- Distinct counters locked in consumption order (one operation): each position is its own slot.
          position_slots := ARRAY(SELECT generate_series(1, consumption_count));
        ELSE
          SELECT array_agg(s.slot ORDER BY w.position) INTO position_slots
          FROM unnest(counter_keys, window_starts) WITH ORDINALITY AS w(counter_key, window_start, position)
          JOIN unnest(slot_keys, slot_windows) WITH ORDINALITY AS s(counter_key, window_start, slot)
            USING (counter_key, window_start);
        END IF;

        -- A new counter has no holds yet: nothing before the batch's earliest now can have expired on it.
        INSERT INTO paymaster_limit_counters (counter_key, window_start, used, held, expired_until)
        SELECT wanted.counter_key, wanted.window_start, 0, 0, wanted.earliest_now
        FROM unnest(slot_keys, slot_windows, slot_earliest_nows) WITH ORDINALITY
          AS wanted(counter_key, window_start, earliest_now, slot)
        ORDER BY wanted.slot
        ON CONFLICT (counter_key, window_start) DO NOTHING;
        SELECT array_agg(locked.used ORDER BY locked.slot), array_agg(locked.held ORDER BY locked.slot),
          array_agg(locked.expired_until ORDER BY locked.slot)
        INTO slot_used, slot_held, slot_expired_until
        FROM (
          SELECT wanted.slot, counter.used, counter.held, counter.expired_until
          FROM unnest(slot_keys, slot_windows) WITH ORDINALITY AS wanted(counter_key, window_start, slot)
          JOIN paymaster_limit_counters AS counter
            ON counter.counter_key = wanted.counter_key AND counter.window_start = wanted.window_start
          ORDER BY wanted.slot
          FOR UPDATE OF counter
        ) AS locked;
        -- No hold on these counters expires before this (the scans below are skipped until a now reaches it):
        -- only this transaction adds holds to them while it holds their locks.
        SELECT coalesce(min(h.expires_at), 'infinity') INTO next_expiry FROM paymaster_operation_holds AS h
        WHERE h.expires_at > (SELECT min(locked_until) FROM unnest(slot_expired_until) AS locked_until);
      END IF;

      FOR item IN 1 .. coalesce(cardinality(usages), 0) LOOP
        first_position := next_position;
        WHILE next_position <= consumption_count AND consumption_items[next_position] = item LOOP
          next_position := next_position + 1;
        END LOOP;
        usage := usages[item];
        row_chain := (usage->>'chain_id')::integer;
        row_entry_point := usage->>'entry_point';
        row_hash := usage->>'user_op_hash';
        row_fingerprint := usage->>'request_fingerprint';
        refused := 0;
        stored_result := NULL;

        IF row_fingerprint IS NOT NULL THEN
          SELECT existing.signed_result INTO stored_result FROM paymaster_usage AS existing
          WHERE existing.chain_id = row_chain AND existing.entry_point = row_entry_point
            AND existing.request_fingerprint = row_fingerprint AND existing.signed_result IS NOT NULL
          ORDER BY existing.seq LIMIT 1;
          IF FOUND THEN
            RETURN NEXT;
            CONTINUE;
          END IF;
        END IF;

        item_used := slot_used;
        item_held := slot_held;
        item_expired_until := slot_expired_until;
        held_positions := '{}';
        held_keys := '{}';
        held_windows := '{}';
        held_amounts := '{}';
        held_bases := '{}';
        FOR consumption IN first_position .. next_position - 1 LOOP
          slot := position_slots[consumption];
          IF bases[consumption] = 'ops' THEN
            IF item_used[slot] + amounts[consumption] > limits[consumption] THEN
              refused := consumption - first_position + 1;
              EXIT;
            END IF;
            item_used[slot] := item_used[slot] + amounts[consumption];
          ELSE
            frontier := greatest(item_expired_until[slot], now_ats[item]);
            expired := 0;
            IF frontier > item_expired_until[slot] AND frontier >= next_expiry THEN
              SELECT coalesce(sum(h.amounts[i]), 0) INTO expired
              FROM paymaster_operation_holds AS h, generate_subscripts(h.counter_keys, 1) AS i
              WHERE h.expires_at > item_expired_until[slot] AND h.expires_at <= frontier
                AND h.counter_keys[i] = slot_keys[slot] AND h.window_starts[i] = slot_windows[slot];
            END IF;
            item_held[slot] := item_held[slot] - expired;
            IF bases[consumption] = 'reservation' THEN
              SELECT floor(balance.balance_usd * 1000000) INTO allowed
              FROM prepaid_balances AS balance WHERE balance.merchant_id = balance_merchants[item] FOR SHARE;
              allowed := coalesce(allowed, 0);
            ELSE
              allowed := limits[consumption];
            END IF;
            IF item_used[slot] + item_held[slot] + amounts[consumption] > allowed THEN
              refused := consumption - first_position + 1;
              EXIT;
            END IF;
            -- A hold that has already expired for this counter counts nothing.
            item_held[slot] := item_held[slot]
              + CASE WHEN hold_expires_ats[item] > frontier THEN amounts[consumption] ELSE 0 END;
            item_expired_until[slot] := frontier;
            held_positions := held_positions || (consumption - first_position + 1);
            held_keys := held_keys || counter_keys[consumption];
            held_windows := held_windows || window_starts[consumption];
            held_amounts := held_amounts || amounts[consumption];
            held_bases := held_bases || bases[consumption];
          END IF;
        END LOOP;

        IF refused <> 0 THEN
          SELECT existing.signed_result INTO stored_result FROM paymaster_usage AS existing
          WHERE existing.chain_id = row_chain AND existing.entry_point = row_entry_point
            AND existing.user_op_hash = row_hash AND existing.signed_result IS NOT NULL
          ORDER BY existing.seq LIMIT 1;
          IF FOUND THEN
            refused := 0;
          END IF;
          RETURN NEXT;
          CONTINUE;
        END IF;

        INSERT INTO paymaster_usage (merchant_id, client_id, method, chain_id, mode, status, reason, sender,
          entry_point, user_op_hash, targets, valid_until, eth_usd_price, estimated_gas_cost_wei,
          estimated_cost_usd, hold_id, request_fingerprint, signed_result, policy_id)
        SELECT (usage->>'merchant_id')::uuid, usage->>'client_id', usage->>'method', row_chain,
          usage->>'mode', usage->>'status', usage->>'reason', usage->>'sender', row_entry_point, row_hash,
          ARRAY(SELECT jsonb_array_elements_text(usage->'targets')), (usage->>'valid_until')::timestamptz,
          (usage->>'eth_usd_price')::numeric, (usage->>'estimated_gas_cost_wei')::numeric,
          (usage->>'estimated_cost_usd')::numeric, (usage->>'hold_id')::uuid, row_fingerprint,
          usage->'signed_result', (usage->>'policy_id')::uuid
        ON CONFLICT (chain_id, entry_point, user_op_hash) WHERE user_op_hash IS NOT NULL DO NOTHING;
        IF NOT FOUND THEN
          -- A concurrent identical request recorded it first: this operation consumes nothing.
          SELECT existing.signed_result INTO stored_result FROM paymaster_usage AS existing
          WHERE existing.chain_id = row_chain AND existing.entry_point = row_entry_point
            AND existing.user_op_hash = row_hash AND existing.signed_result IS NOT NULL
          ORDER BY existing.seq LIMIT 1;
          IF stored_result IS NULL THEN
            RAISE EXCEPTION 'user operation % conflicts with a row that has no signed result', row_hash;
          END IF;
          RETURN NEXT;
          CONTINUE;
        END IF;

        IF cardinality(held_positions) > 0 THEN
          INSERT INTO paymaster_operation_holds
            (hold_id, positions, counter_keys, window_starts, amounts, bases, expires_at)
          VALUES (holds[item], held_positions, held_keys, held_windows, held_amounts, held_bases,
            hold_expires_ats[item]);
          next_expiry := least(next_expiry, hold_expires_ats[item]);
        END IF;
        slot_used := item_used;
        slot_held := item_held;
        slot_expired_until := item_expired_until;
        RETURN NEXT;
      END LOOP;

      IF consumption_count > 0 THEN
        UPDATE paymaster_limit_counters AS counter
        SET used = batch.used, held = batch.held, expired_until = batch.expired_until
        FROM unnest(slot_keys, slot_windows, slot_used, slot_held, slot_expired_until)
          AS batch(counter_key, window_start, used, held, expired_until)
        WHERE counter.counter_key = batch.counter_key AND counter.window_start = batch.window_start
          AND (counter.used, counter.held, counter.expired_until)
            IS DISTINCT FROM (batch.used, batch.held, batch.expired_until);
      END IF;
    END
    $$`;

/** The batch's statement (db/paymasterUsage.ts) keeps its signature: counters locked in the global order. */
const recordBatchInGlobalOrder = `
    CREATE OR REPLACE FUNCTION record_signed_paymaster_operations(
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
    LANGUAGE sql AS $$
      SELECT recorded.refused, recorded.stored_result
      FROM record_signed_paymaster_batch(consumption_items, counter_keys, window_starts, amounts, limits,
        bases, holds, hold_expires_ats, now_ats, balance_merchants, usages, false) AS recorded
    $$`;

/** One operation: its counters locked in its consumption order, as consume_paymaster_limits locks them. */
const recordOneThroughBatch = `
    CREATE OR REPLACE FUNCTION record_signed_paymaster_operation(
      counter_keys text[],
      window_starts timestamptz[],
      amounts bigint[],
      limits bigint[],
      bases text[],
      hold uuid,
      hold_expires_at timestamptz,
      now_at timestamptz,
      balance_merchant uuid,
      usage jsonb,
      OUT refused integer,
      OUT stored_result jsonb
    )
    LANGUAGE sql AS $$
      SELECT recorded.refused, recorded.stored_result
      FROM record_signed_paymaster_batch(
        array_fill(1, ARRAY[coalesce(cardinality(counter_keys), 0)]), counter_keys, window_starts, amounts,
        limits, bases, ARRAY[hold], ARRAY[hold_expires_at], ARRAY[now_at], ARRAY[balance_merchant],
        ARRAY[usage], true) AS recorded
    $$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(recordBatchCore).execute(db);
  await sql.raw(recordBatchInGlobalOrder).execute(db);
  await sql.raw(recordOneThroughBatch).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw(recordWithRepeat).execute(db);
  await sql`DROP FUNCTION record_signed_paymaster_operations(integer[], text[], timestamptz[], bigint[], bigint[],
    text[], uuid[], timestamptz[], timestamptz[], uuid[], jsonb[])`.execute(db);
  await sql.raw(recordBatch).execute(db);
  await sql`DROP FUNCTION record_signed_paymaster_batch(integer[], text[], timestamptz[], bigint[], bigint[],
    text[], uuid[], timestamptz[], timestamptz[], uuid[], jsonb[], boolean)`.execute(db);
}
