import { sql, type Kysely } from 'kysely';
import { createPaymasterLimitFunctions } from '../paymasterLimitFunctions';

/**
 * One hold row per signed operation instead of one per dollar counter (issue 33): the row carries the
 * operation's counters, amounts and bases as parallel arrays, in consumption order. A signed answer
 * used to insert four rows (eight index entries) and run one UPDATE … RETURNING over the holds per
 * counter to release expired ones; it now inserts one row.
 *
 * Expiry without a per-counter row to flag: each counter keeps `expired_until`, the time up to which
 * expired holds have been taken out of its `held`. Invariant, under the counter's row lock:
 *
 *   held = the sum of the amounts of the existing holds on this counter whose expires_at > expired_until
 *
 * Consuming on a counter moves `expired_until` forward to the caller's `now` (never back) and takes the
 * holds that expired in between out of `held` (read from the holds by expires_at, not written: no lock
 * on a hold row, so no new lock order). A release or settle takes a hold out of `held` only where it
 * had not expired for that counter yet (expires_at > expired_until), then deletes its one row. Every
 * function still locks counters in the consumption order (`positions`), as migration 202's did, so
 * concurrent requests are serialised per counter exactly as before: none can overshoot a limit.
 *
 * Existing holds are kept: first released by expiry as of now (what the next consumption would have
 * done), so that a released hold is exactly one with expires_at ≤ now; every counter's expired_until is
 * then now, and each hold's rows become one row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE paymaster_limit_counters
    ADD COLUMN expired_until timestamptz NOT NULL DEFAULT '-infinity'`.execute(db);

  await sql`CREATE TABLE paymaster_operation_holds (
    hold_id uuid PRIMARY KEY,
    positions integer[] NOT NULL,
    counter_keys text[] NOT NULL,
    window_starts timestamptz[] NOT NULL,
    amounts bigint[] NOT NULL,
    bases text[] NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT paymaster_operation_holds_arrays_check CHECK (
      cardinality(positions) > 0
      AND cardinality(counter_keys) = cardinality(positions)
      AND cardinality(window_starts) = cardinality(positions)
      AND cardinality(amounts) = cardinality(positions)
      AND cardinality(bases) = cardinality(positions)
    ),
    CONSTRAINT paymaster_operation_holds_amounts_check CHECK (0 <= ALL(amounts)),
    CONSTRAINT paymaster_operation_holds_bases_check CHECK (bases <@ ARRAY['cost', 'charged', 'reservation'])
  )`.execute(db);
  await sql`CREATE INDEX paymaster_operation_holds_expires_at_idx
    ON paymaster_operation_holds (expires_at)`.execute(db);

  // Existing holds: released by expiry as of now, then one row per operation.
  await sql`LOCK TABLE paymaster_limit_counters, paymaster_limit_holds IN EXCLUSIVE MODE`.execute(db);
  await sql`
    WITH expired AS (
      UPDATE paymaster_limit_holds SET released = true
      WHERE NOT released AND expires_at <= now()
      RETURNING counter_key, window_start, amount
    ), per_counter AS (
      SELECT counter_key, window_start, sum(amount) AS amount FROM expired GROUP BY counter_key, window_start
    )
    UPDATE paymaster_limit_counters AS counter SET held = counter.held - per_counter.amount
    FROM per_counter
    WHERE counter.counter_key = per_counter.counter_key AND counter.window_start = per_counter.window_start`.execute(
    db,
  );
  await sql`UPDATE paymaster_limit_counters SET expired_until = now()`.execute(db);
  await sql`
    INSERT INTO paymaster_operation_holds
      (hold_id, positions, counter_keys, window_starts, amounts, bases, expires_at)
    SELECT hold_id, array_agg(position ORDER BY position), array_agg(counter_key ORDER BY position),
      array_agg(window_start ORDER BY position), array_agg(amount ORDER BY position),
      array_agg(basis ORDER BY position), max(expires_at)
    FROM paymaster_limit_holds GROUP BY hold_id`.execute(db);
  await sql`DROP TABLE paymaster_limit_holds`.execute(db);

  await createPaymasterLimitFunctions(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE paymaster_limit_holds (
    hold_id uuid NOT NULL,
    position integer NOT NULL,
    counter_key text NOT NULL,
    window_start timestamptz NOT NULL,
    amount bigint NOT NULL,
    basis text NOT NULL,
    expires_at timestamptz NOT NULL,
    released boolean NOT NULL DEFAULT false,
    CONSTRAINT paymaster_limit_holds_pkey PRIMARY KEY (hold_id, position),
    CONSTRAINT paymaster_limit_holds_amount_check CHECK (amount >= 0),
    CONSTRAINT paymaster_limit_holds_basis_check CHECK (basis IN ('cost', 'charged', 'reservation'))
  )`.execute(db);
  await sql`CREATE INDEX paymaster_limit_holds_active_idx
    ON paymaster_limit_holds (counter_key, window_start, expires_at) WHERE NOT released`.execute(db);
  // A part is released where it had expired for its counter (the invariant of `up`).
  await sql`
    INSERT INTO paymaster_limit_holds
      (hold_id, position, counter_key, window_start, amount, basis, expires_at, released)
    SELECT h.hold_id, part.position, part.counter_key, part.window_start, part.amount, part.basis,
      h.expires_at, h.expires_at <= coalesce(counter.expired_until, '-infinity')
    FROM paymaster_operation_holds AS h
    CROSS JOIN LATERAL unnest(h.positions, h.counter_keys, h.window_starts, h.amounts, h.bases)
      AS part(position, counter_key, window_start, amount, basis)
    LEFT JOIN paymaster_limit_counters AS counter
      ON counter.counter_key = part.counter_key AND counter.window_start = part.window_start`.execute(db);
  await sql`DROP TABLE paymaster_operation_holds`.execute(db);
  await sql`ALTER TABLE paymaster_limit_counters DROP COLUMN expired_until`.execute(db);
  await restoreMigration202Functions(db);
}

/** Migration 202's three functions, as they were (copied: migrations are history). */
async function restoreMigration202Functions(db: Kysely<unknown>): Promise<void> {
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
      expired bigint;
      allowed numeric;
    BEGIN
      BEGIN
        FOR step IN 1 .. coalesce(array_length(counter_keys, 1), 0) LOOP
          INSERT INTO paymaster_limit_counters (counter_key, window_start, used, held)
          VALUES (counter_keys[step], window_starts[step], 0, 0)
          ON CONFLICT (counter_key, window_start) DO NOTHING;
          SELECT counter.used, counter.held INTO counter_used, counter_held
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
            WITH released_holds AS (
              UPDATE paymaster_limit_holds SET released = true
              WHERE counter_key = counter_keys[step] AND window_start = window_starts[step]
                AND NOT released AND expires_at <= now_at
              RETURNING amount
            )
            SELECT coalesce(sum(amount), 0) INTO expired FROM released_holds;
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
            UPDATE paymaster_limit_counters SET held = counter_held + amounts[step]
            WHERE counter_key = counter_keys[step] AND window_start = window_starts[step];
            INSERT INTO paymaster_limit_holds
              (hold_id, position, counter_key, window_start, amount, basis, expires_at)
            VALUES (hold, step, counter_keys[step], window_starts[step], amounts[step],
              bases[step], hold_expires_at);
          END IF;
        END LOOP;
      EXCEPTION WHEN raise_exception THEN
        -- Local variables keep their values; the block's writes are rolled back.
        RETURN refused;
      END;
      RETURN 0;
    END
    $$`.execute(db);

  /* Gives back the holds of `holds` (not signed after all, or never included): deleted, and the counters'
   * held amounts lowered by those not already released by expiry. */
  await sql`
    CREATE OR REPLACE FUNCTION release_paymaster_limit_holds(holds uuid[]) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM paymaster_limit_counters AS counter
      JOIN paymaster_limit_holds AS h USING (counter_key, window_start)
      WHERE h.hold_id = ANY(holds)
      ORDER BY h.position, counter.counter_key, counter.window_start
      FOR UPDATE OF counter;
      UPDATE paymaster_limit_counters AS counter SET held = counter.held - freed.amount
      FROM (
        SELECT h.counter_key, h.window_start, sum(h.amount) AS amount FROM paymaster_limit_holds AS h
        WHERE h.hold_id = ANY(holds) AND NOT h.released GROUP BY h.counter_key, h.window_start
      ) AS freed
      WHERE counter.counter_key = freed.counter_key AND counter.window_start = freed.window_start;
      DELETE FROM paymaster_limit_holds WHERE hold_id = ANY(holds);
    END
    $$`.execute(db);

  /* The operation was included: each hold becomes its actual amount (`cost` micro-dollars, or `charged`
   * with markup) in its counter's `used`; a reservation just ends (the gas charge debits the ledger). */
  await sql`
    CREATE OR REPLACE FUNCTION settle_paymaster_limit_hold(hold uuid, cost bigint, charged bigint) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM paymaster_limit_counters AS counter
      JOIN paymaster_limit_holds AS h USING (counter_key, window_start)
      WHERE h.hold_id = hold
      ORDER BY h.position
      FOR UPDATE OF counter;
      UPDATE paymaster_limit_counters AS counter
      SET held = counter.held - CASE WHEN h.released THEN 0 ELSE h.amount END,
        used = counter.used + CASE h.basis WHEN 'cost' THEN cost WHEN 'charged' THEN charged ELSE 0 END
      FROM paymaster_limit_holds AS h
      WHERE h.hold_id = hold
        AND counter.counter_key = h.counter_key AND counter.window_start = h.window_start;
      DELETE FROM paymaster_limit_holds WHERE hold_id = hold;
    END
    $$`.execute(db);
}
