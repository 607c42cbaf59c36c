import { sql, type Kysely } from 'kysely';
import { recordBatchCore } from './2026_12_01_0100_record_signed_without_subtransactions';

/**
 * A batch's rows inserted by one statement per table (issue 46, "profile again"). perf of the recording
 * backend under `bench/recordSignedBatchCpu.ts` put most of each operation's cost in what Postgres does
 * per statement, not per row: starting and ending an executor, opening the seven indexes, preparing the
 * CHECK constraints, for the usage row's INSERT, its hold row's INSERT and its repeat lookup, once per
 * operation inside the plpgsql loop. `record_signed_paymaster_batch` keeps its signature, its answers and
 * its decisions in the same order; what moves is where the rows are written:
 *
 * 1. The repeats by request fingerprint of all the batch's operations are read by one statement before
 *    the loop (rows recorded before the batch); an operation whose fingerprint an earlier operation of the
 *    same batch recorded answers that one's signed result, as the row inserted in the loop answered it.
 * 2. The loop decides every operation as before (its limits against the counters as the earlier ones left
 *    them) without writing: an accepted operation's usage row and its hold's consumptions are kept. A
 *    refused operation looks for its userOpHash among the rows before the batch, then among the batch's
 *    accepted ones; an accepted operation whose userOpHash an earlier one of the batch took answers that
 *    one's signed result and consumes nothing, as its INSERT … ON CONFLICT DO NOTHING did.
 * 3. An expiry scan (rare: only once a now reaches the earliest expiry) counts the batch's kept holds with
 *    the table's, as it counted the rows the loop had inserted.
 * 4. After the loop: one INSERT of the accepted usage rows in the batch's order (ON CONFLICT DO NOTHING on
 *    the unique userOpHash, which still waits for a concurrent identical request's transaction), one
 *    INSERT of their holds, one UPDATE of the counters.
 *
 * When the usage INSERT skips a row, a concurrent request recorded that userOpHash after the loop looked:
 * the operations after it were decided with its consumption counted. With one operation, it answers the
 * stored result and consumes nothing, exactly as before. With more, the function raises and nothing of
 * the batch is kept; the group committer (db/groupCommit.ts) then records each operation alone.
 */
export const recordBatchWithRowsPerStatement = `
    CREATE OR REPLACE FUNCTION record_signed_paymaster_batch(
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
      item_count integer := coalesce(cardinality(usages), 0);
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
      locked_used bigint[];
      locked_held bigint[];
      locked_expired_until timestamptz[];
      -- The current operation's copies of the slots' values, and its held consumptions.
      item_used bigint[];
      item_held bigint[];
      item_expired_until timestamptz[];
      held_positions integer[];
      held_keys text[];
      held_windows timestamptz[];
      held_amounts bigint[];
      held_bases text[];
      -- Per operation, what an earlier request with its fingerprint answered (rows before the batch).
      repeats jsonb[];
      -- The accepted operations (rows to insert), their unique keys, their holds' consumptions flattened.
      accepted integer[] := '{}'::integer[];
      accepted_hash_keys text[] := '{}'::text[];
      accepted_fingerprint_keys text[] := '{}'::text[];
      kept_items integer[] := '{}'::integer[];
      kept_positions integer[] := '{}'::integer[];
      kept_keys text[] := '{}'::text[];
      kept_windows timestamptz[] := '{}'::timestamptz[];
      kept_amounts bigint[] := '{}'::bigint[];
      kept_bases text[] := '{}'::text[];
      -- The answers, in the batch's order.
      answered_refused integer[] := '{}'::integer[];
      answered_stored jsonb[] := '{}'::jsonb[];
      frontier timestamptz;
      next_expiry timestamptz := 'infinity';
      expired bigint;
      allowed numeric;
      usage jsonb;
      row_hash text;
      hash_key text;
      fingerprint_key text;
      found_at integer;
      inserted integer;
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
        locked_used := slot_used;
        locked_held := slot_held;
        locked_expired_until := slot_expired_until;
        -- No hold on these counters expires before this (the scans below are skipped until a now reaches it):
        -- only this transaction adds holds to them while it holds their locks.
        SELECT coalesce(min(h.expires_at), 'infinity') INTO next_expiry FROM paymaster_operation_holds AS h
        WHERE h.expires_at > (SELECT min(locked_until) FROM unnest(slot_expired_until) AS locked_until);
      END IF;

      -- Every operation's repeat by request fingerprint among the rows recorded before the batch.
      SELECT array_agg(repeat.signed_result ORDER BY operation.position) INTO repeats
      FROM unnest(usages) WITH ORDINALITY AS operation(usage, position)
      LEFT JOIN LATERAL (
        SELECT existing.signed_result FROM paymaster_usage AS existing
        WHERE existing.chain_id = (operation.usage->>'chain_id')::integer
          AND existing.entry_point = operation.usage->>'entry_point'
          AND existing.request_fingerprint = operation.usage->>'request_fingerprint'
          AND existing.signed_result IS NOT NULL
        ORDER BY existing.seq LIMIT 1
      ) AS repeat ON true;

      FOR item IN 1 .. item_count LOOP
        first_position := next_position;
        WHILE next_position <= consumption_count AND consumption_items[next_position] = item LOOP
          next_position := next_position + 1;
        END LOOP;
        usage := usages[item];
        row_hash := usage->>'user_op_hash';
        -- NULL when any part is: such a row takes no unique key (as the partial unique index sees it).
        hash_key := (usage->>'chain_id') || ' ' || (usage->>'entry_point') || ' ' || row_hash;
        fingerprint_key := (usage->>'chain_id') || ' ' || (usage->>'entry_point') || ' '
          || (usage->>'request_fingerprint');
        refused := 0;
        stored_result := NULL;

        IF usage->>'request_fingerprint' IS NOT NULL THEN
          stored_result := repeats[item];
          IF stored_result IS NULL AND fingerprint_key IS NOT NULL THEN
            found_at := array_position(accepted_fingerprint_keys, fingerprint_key);
            IF found_at IS NOT NULL THEN
              stored_result := usages[accepted[found_at]]->'signed_result';
            END IF;
          END IF;
          IF stored_result IS NOT NULL THEN
            answered_refused := array_append(answered_refused, 0);
            answered_stored := array_append(answered_stored, stored_result);
            CONTINUE;
          END IF;
        END IF;

        item_used := slot_used;
        item_held := slot_held;
        item_expired_until := slot_expired_until;
        held_positions := '{}'::integer[];
        held_keys := '{}'::text[];
        held_windows := '{}'::timestamptz[];
        held_amounts := '{}'::bigint[];
        held_bases := '{}'::text[];
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
              -- The holds this batch keeps count as the rows they will be.
              SELECT expired + coalesce(sum(kept.amount), 0) INTO expired
              FROM unnest(kept_items, kept_keys, kept_windows, kept_amounts)
                AS kept(item, counter_key, window_start, amount)
              WHERE hold_expires_ats[kept.item] > item_expired_until[slot]
                AND hold_expires_ats[kept.item] <= frontier
                AND kept.counter_key = slot_keys[slot] AND kept.window_start = slot_windows[slot];
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
          -- Refused, unless its userOpHash is already recorded: before the batch, else by the batch.
          SELECT existing.signed_result INTO stored_result FROM paymaster_usage AS existing
          WHERE existing.chain_id = (usage->>'chain_id')::integer AND existing.entry_point = usage->>'entry_point'
            AND existing.user_op_hash = row_hash AND existing.signed_result IS NOT NULL
          ORDER BY existing.seq LIMIT 1;
          IF stored_result IS NULL AND hash_key IS NOT NULL THEN
            found_at := array_position(accepted_hash_keys, hash_key);
            IF found_at IS NOT NULL THEN
              stored_result := usages[accepted[found_at]]->'signed_result';
            END IF;
          END IF;
          IF stored_result IS NOT NULL THEN
            refused := 0;
          END IF;
          answered_refused := array_append(answered_refused, refused);
          answered_stored := array_append(answered_stored, stored_result);
          CONTINUE;
        END IF;

        IF hash_key IS NOT NULL THEN
          found_at := array_position(accepted_hash_keys, hash_key);
          IF found_at IS NOT NULL THEN
            -- An earlier operation of this batch records this userOpHash: this one consumes nothing.
            stored_result := usages[accepted[found_at]]->'signed_result';
            IF stored_result IS NULL THEN
              RAISE EXCEPTION 'user operation % conflicts with a row that has no signed result', row_hash;
            END IF;
            answered_refused := array_append(answered_refused, 0);
            answered_stored := array_append(answered_stored, stored_result);
            CONTINUE;
          END IF;
        END IF;

        accepted := accepted || item;
        accepted_hash_keys := array_append(accepted_hash_keys, hash_key);
        accepted_fingerprint_keys := array_append(accepted_fingerprint_keys, fingerprint_key);
        IF cardinality(held_positions) > 0 THEN
          kept_items := kept_items || array_fill(item, ARRAY[cardinality(held_positions)]);
          kept_positions := kept_positions || held_positions;
          kept_keys := kept_keys || held_keys;
          kept_windows := kept_windows || held_windows;
          kept_amounts := kept_amounts || held_amounts;
          kept_bases := kept_bases || held_bases;
          next_expiry := least(next_expiry, hold_expires_ats[item]);
        END IF;
        slot_used := item_used;
        slot_held := item_held;
        slot_expired_until := item_expired_until;
        answered_refused := array_append(answered_refused, 0);
        answered_stored := array_append(answered_stored, NULL::jsonb);
      END LOOP;

      IF cardinality(accepted) > 0 THEN
        INSERT INTO paymaster_usage (merchant_id, client_id, method, chain_id, mode, status, reason, sender,
          entry_point, user_op_hash, targets, valid_until, eth_usd_price, estimated_gas_cost_wei,
          estimated_cost_usd, hold_id, request_fingerprint, signed_result, policy_id)
        SELECT (taken.usage->>'merchant_id')::uuid, taken.usage->>'client_id', taken.usage->>'method',
          (taken.usage->>'chain_id')::integer, taken.usage->>'mode', taken.usage->>'status',
          taken.usage->>'reason', taken.usage->>'sender', taken.usage->>'entry_point',
          taken.usage->>'user_op_hash', ARRAY(SELECT jsonb_array_elements_text(taken.usage->'targets')),
          (taken.usage->>'valid_until')::timestamptz, (taken.usage->>'eth_usd_price')::numeric,
          (taken.usage->>'estimated_gas_cost_wei')::numeric, (taken.usage->>'estimated_cost_usd')::numeric,
          (taken.usage->>'hold_id')::uuid, taken.usage->>'request_fingerprint', taken.usage->'signed_result',
          (taken.usage->>'policy_id')::uuid
        FROM (
          SELECT usages[accepted_item] AS usage, position
          FROM unnest(accepted) WITH ORDINALITY AS accepted_items(accepted_item, position)
        ) AS taken
        ORDER BY taken.position
        ON CONFLICT (chain_id, entry_point, user_op_hash) WHERE user_op_hash IS NOT NULL DO NOTHING;
        GET DIAGNOSTICS inserted = ROW_COUNT;
        IF inserted < cardinality(accepted) THEN
          IF item_count > 1 THEN
            RAISE EXCEPTION 'an operation of this batch was recorded by a concurrent request: record each alone';
          END IF;
          -- The one operation: a concurrent identical request recorded it first, so it consumes nothing.
          row_hash := usages[1]->>'user_op_hash';
          SELECT existing.signed_result INTO stored_result FROM paymaster_usage AS existing
          WHERE existing.chain_id = (usages[1]->>'chain_id')::integer
            AND existing.entry_point = usages[1]->>'entry_point'
            AND existing.user_op_hash = row_hash AND existing.signed_result IS NOT NULL
          ORDER BY existing.seq LIMIT 1;
          IF stored_result IS NULL THEN
            RAISE EXCEPTION 'user operation % conflicts with a row that has no signed result', row_hash;
          END IF;
          answered_stored[1] := stored_result;
          kept_items := '{}'::integer[];
          slot_used := locked_used;
          slot_held := locked_held;
          slot_expired_until := locked_expired_until;
        END IF;
      END IF;

      IF cardinality(kept_items) > 0 THEN
        INSERT INTO paymaster_operation_holds
          (hold_id, positions, counter_keys, window_starts, amounts, bases, expires_at)
        SELECT holds[kept.item], array_agg(kept.position ORDER BY kept.n), array_agg(kept.counter_key ORDER BY kept.n),
          array_agg(kept.window_start ORDER BY kept.n), array_agg(kept.amount ORDER BY kept.n),
          array_agg(kept.basis ORDER BY kept.n), hold_expires_ats[kept.item]
        FROM unnest(kept_items, kept_positions, kept_keys, kept_windows, kept_amounts, kept_bases) WITH ORDINALITY
          AS kept(item, position, counter_key, window_start, amount, basis, n)
        GROUP BY kept.item
        ORDER BY kept.item;
      END IF;

      IF consumption_count > 0 THEN
        UPDATE paymaster_limit_counters AS counter
        SET used = batch.used, held = batch.held, expired_until = batch.expired_until
        FROM unnest(slot_keys, slot_windows, slot_used, slot_held, slot_expired_until)
          AS batch(counter_key, window_start, used, held, expired_until)
        WHERE counter.counter_key = batch.counter_key AND counter.window_start = batch.window_start
          AND (counter.used, counter.held, counter.expired_until)
            IS DISTINCT FROM (batch.used, batch.held, batch.expired_until);
      END IF;

      RETURN QUERY
        SELECT answer.denied_at, answer.stored
        FROM unnest(answered_refused, answered_stored) WITH ORDINALITY AS answer(denied_at, stored, n)
        ORDER BY answer.n;
    END
    $$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(recordBatchWithRowsPerStatement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw(recordBatchCore.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION')).execute(db);
}
