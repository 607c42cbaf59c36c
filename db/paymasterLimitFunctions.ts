import { sql, type Kysely } from 'kysely';

/**
 * The atomic paymaster limit functions, in Postgres: `consume_paymaster_limits` (all of an operation's
 * counters or none, locked in consumption order, so concurrent requests never overshoot a limit),
 * `release_paymaster_limit_holds` and `settle_paymaster_limit_hold`. db/paymasterLimits.ts calls them;
 * migration 2026_11_26_960 installs them by calling this function (their text is kept here, beside the
 * queries, to be found: docs/architecture.md). The migration's effect is this text: a change to the
 * functions is a new migration with its own CREATE OR REPLACE, never an edit here.
 */
export async function createPaymasterLimitFunctions(db: Kysely<unknown>): Promise<void> {
  await createConsumeFunction(db);
  await createReleaseFunction(db);
  await createSettleFunction(db);
}

/*
 * Same arguments, order and answer as migration 202's: all or nothing, in the caller's order; the
 * first refusal raises inside the block, which rolls back what the earlier counters took, and the
 * answer is that counter's 1-based position (0 = everything consumed). The operation's dollar steps
 * become one hold row, inserted once every counter took its part.
 */
async function createConsumeFunction(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION consume_paymaster_limits(
      counter_keys text[],
      window_starts timestamptz[],
      amounts bigint[],
      limits bigint[],
      bases text[],
      hold uuid,
      hold_expires_at timestamptz,
      now_at timestamptz,
      balance_merchant uuid
    ) RETURNS integer
    LANGUAGE plpgsql AS $$
    DECLARE
      step integer;
      refused integer := 0;
      counter_used bigint;
      counter_held bigint;
      counter_expired_until timestamptz;
      frontier timestamptz;
      expired bigint;
      allowed numeric;
      held_positions integer[] := '{}';
    BEGIN
      BEGIN
        FOR step IN 1 .. coalesce(array_length(counter_keys, 1), 0) LOOP
          -- A new counter has no holds yet: nothing before now_at can have expired on it.
          INSERT INTO paymaster_limit_counters (counter_key, window_start, used, held, expired_until)
          VALUES (counter_keys[step], window_starts[step], 0, 0, now_at)
          ON CONFLICT (counter_key, window_start) DO NOTHING;
          SELECT counter.used, counter.held, counter.expired_until
          INTO counter_used, counter_held, counter_expired_until
          FROM paymaster_limit_counters AS counter
          WHERE counter.counter_key = counter_keys[step] AND counter.window_start = window_starts[step]
          FOR UPDATE;

          IF bases[step] = 'ops' THEN
            IF counter_used + amounts[step] > limits[step] THEN
              refused := step;
              RAISE EXCEPTION 'sponsorship limit refused';
            END IF;
            UPDATE paymaster_limit_counters SET used = used + amounts[step]
            WHERE counter_key = counter_keys[step] AND window_start = window_starts[step];
          ELSE
            frontier := greatest(counter_expired_until, now_at);
            expired := 0;
            IF frontier > counter_expired_until THEN
              SELECT coalesce(sum(h.amounts[i]), 0) INTO expired
              FROM paymaster_operation_holds AS h, generate_subscripts(h.counter_keys, 1) AS i
              WHERE h.expires_at > counter_expired_until AND h.expires_at <= frontier
                AND h.counter_keys[i] = consume_paymaster_limits.counter_keys[step]
                AND h.window_starts[i] = consume_paymaster_limits.window_starts[step];
            END IF;
            counter_held := counter_held - expired;
            IF bases[step] = 'reservation' THEN
              SELECT floor(balance.balance_usd * 1000000) INTO allowed
              FROM prepaid_balances AS balance WHERE balance.merchant_id = balance_merchant FOR SHARE;
              allowed := coalesce(allowed, 0);
            ELSE
              allowed := limits[step];
            END IF;
            IF counter_used + counter_held + amounts[step] > allowed THEN
              refused := step;
              RAISE EXCEPTION 'sponsorship limit refused';
            END IF;
            -- A hold that has already expired for this counter counts nothing (the invariant above).
            UPDATE paymaster_limit_counters
            SET held = counter_held + CASE WHEN hold_expires_at > frontier THEN amounts[step] ELSE 0 END,
              expired_until = frontier
            WHERE counter_key = counter_keys[step] AND window_start = window_starts[step];
            held_positions := held_positions || step;
          END IF;
        END LOOP;
        IF cardinality(held_positions) > 0 THEN
          INSERT INTO paymaster_operation_holds
            (hold_id, positions, counter_keys, window_starts, amounts, bases, expires_at)
          SELECT hold, held_positions,
            ARRAY(SELECT consume_paymaster_limits.counter_keys[p] FROM unnest(held_positions) WITH ORDINALITY AS t(p, o) ORDER BY o),
            ARRAY(SELECT consume_paymaster_limits.window_starts[p] FROM unnest(held_positions) WITH ORDINALITY AS t(p, o) ORDER BY o),
            ARRAY(SELECT consume_paymaster_limits.amounts[p] FROM unnest(held_positions) WITH ORDINALITY AS t(p, o) ORDER BY o),
            ARRAY(SELECT consume_paymaster_limits.bases[p] FROM unnest(held_positions) WITH ORDINALITY AS t(p, o) ORDER BY o),
            hold_expires_at;
        END IF;
      EXCEPTION WHEN raise_exception THEN
        -- Local variables keep their values; the block's writes are rolled back.
        RETURN refused;
      END;
      RETURN 0;
    END
    $$`.execute(db);
}

/* Gives back the holds of `holds` (not signed after all, or never included): each counter's held
 * lowered where the hold had not expired for it yet, the rows deleted. */
async function createReleaseFunction(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION release_paymaster_limit_holds(holds uuid[]) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM paymaster_limit_counters AS counter
      JOIN (
        SELECT part.counter_key, part.window_start, part.position FROM paymaster_operation_holds AS h,
          unnest(h.counter_keys, h.window_starts, h.positions) AS part(counter_key, window_start, position)
        WHERE h.hold_id = ANY(holds)
      ) AS held USING (counter_key, window_start)
      ORDER BY held.position, counter.counter_key, counter.window_start
      FOR UPDATE OF counter;
      UPDATE paymaster_limit_counters AS counter SET held = counter.held - freed.amount
      FROM (
        SELECT part.counter_key, part.window_start, sum(part.amount) AS amount
        FROM paymaster_operation_holds AS h
        CROSS JOIN LATERAL unnest(h.counter_keys, h.window_starts, h.amounts)
          AS part(counter_key, window_start, amount)
        JOIN paymaster_limit_counters AS locked
          ON locked.counter_key = part.counter_key AND locked.window_start = part.window_start
        WHERE h.hold_id = ANY(holds) AND h.expires_at > locked.expired_until
        GROUP BY part.counter_key, part.window_start
      ) AS freed
      WHERE counter.counter_key = freed.counter_key AND counter.window_start = freed.window_start;
      DELETE FROM paymaster_operation_holds WHERE hold_id = ANY(holds);
    END
    $$`.execute(db);
}

/* The operation was included: each part of its hold becomes its actual amount (`cost` micro-dollars,
 * or `charged` with markup) in its counter's `used`, and leaves `held` where it had not expired for that
 * counter; a reservation just ends (the gas charge debits the ledger). */
async function createSettleFunction(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION settle_paymaster_limit_hold(hold uuid, cost bigint, charged bigint) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM paymaster_limit_counters AS counter
      JOIN (
        SELECT part.counter_key, part.window_start, part.position FROM paymaster_operation_holds AS h,
          unnest(h.counter_keys, h.window_starts, h.positions) AS part(counter_key, window_start, position)
        WHERE h.hold_id = hold
      ) AS held USING (counter_key, window_start)
      ORDER BY held.position
      FOR UPDATE OF counter;
      UPDATE paymaster_limit_counters AS counter
      SET held = counter.held - CASE WHEN part.expires_at > counter.expired_until THEN part.amount ELSE 0 END,
        used = counter.used + CASE part.basis WHEN 'cost' THEN cost WHEN 'charged' THEN charged ELSE 0 END
      FROM (
        SELECT p.counter_key, p.window_start, p.amount, p.basis, h.expires_at
        FROM paymaster_operation_holds AS h,
          unnest(h.counter_keys, h.window_starts, h.amounts, h.bases) AS p(counter_key, window_start, amount, basis)
        WHERE h.hold_id = hold
      ) AS part
      WHERE counter.counter_key = part.counter_key AND counter.window_start = part.window_start;
      DELETE FROM paymaster_operation_holds WHERE hold_id = hold;
    END
    $$`.execute(db);
}
