import { sql, type Kysely } from 'kysely';
import { up as createConsumeLimitCounters } from './2026_11_22_090_limit_counters_function';

/**
 * Sponsorship dollars are held, not spent, at signing. An operation's maximum cost is a hold on each
 * dollar counter it counts against (platform budget per network class, the merchant's share of it, the
 * merchant's and the client's daily caps, the sender's daily cap) and, on mainnets, a reservation
 * against the merchant's prepaid balance. A hold lasts until the paymaster data's validUntil: once that
 * has passed it no longer counts (released on the next read of its counter), the receipt tracker
 * replaces it with the operation's actual cost, the dropped sweep deletes it. Operation counts are still
 * consumed at signing. `position` is the counter's place in the consumption order: every function takes
 * counter locks in that order, so holds, releases and settlements never deadlock.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE paymaster_limit_counters
    ADD COLUMN held bigint NOT NULL DEFAULT 0,
    ADD CONSTRAINT paymaster_limit_counters_held_check CHECK (held >= 0)`.execute(db);

  await db.schema
    .createTable('paymaster_limit_holds')
    .addColumn('hold_id', 'uuid', (col) => col.notNull())
    .addColumn('position', 'integer', (col) => col.notNull())
    .addColumn('counter_key', 'text', (col) => col.notNull())
    .addColumn('window_start', 'timestamptz', (col) => col.notNull())
    .addColumn('amount', 'bigint', (col) => col.notNull())
    // What settles the hold: the actual cost (`cost`), cost plus markup (`charged`), or the ledger
    // debit of the gas charge (`reservation`, against the prepaid balance).
    .addColumn('basis', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('released', 'boolean', (col) => col.notNull().defaultTo(false))
    .addPrimaryKeyConstraint('paymaster_limit_holds_pkey', ['hold_id', 'position'])
    .addCheckConstraint('paymaster_limit_holds_amount_check', sql`amount >= 0`)
    .addCheckConstraint('paymaster_limit_holds_basis_check', sql`basis IN ('cost', 'charged', 'reservation')`)
    .execute();
  await sql`CREATE INDEX paymaster_limit_holds_active_idx
    ON paymaster_limit_holds (counter_key, window_start, expires_at) WHERE NOT released`.execute(db);

  await db.schema.alterTable('paymaster_usage').addColumn('hold_id', 'uuid').execute();

  await db.schema
    .alterTable('paymaster_merchant_limits')
    .addColumn('per_merchant_daily_usd', sql`numeric(20, 6)`, (col) =>
      col.check(sql`per_merchant_daily_usd > 0`),
    )
    .addColumn('per_client_daily_usd', sql`numeric(20, 6)`, (col) => col.check(sql`per_client_daily_usd > 0`))
    .execute();

  await sql`DROP FUNCTION consume_paymaster_limit_counters(text[], timestamptz[], bigint[], bigint[])`.execute(
    db,
  );

  /*
   * Consumes an operation's limits all or nothing, in the caller's order (a fixed lock order). `bases`:
   * `ops` adds to `used` at once; `cost` / `charged` hold `amount` until `hold_expires_at` against
   * used + unexpired holds ≤ limit; `reservation` holds it against the merchant's running prepaid
   * balance (`balance_merchant`; the limit is ignored). Holds expired by `now_at` are released first.
   * The first refusal raises inside the block, which rolls back what the earlier counters took; the
   * answer is that counter's 1-based position (0 = everything consumed).
   */
  await sql`
    CREATE FUNCTION consume_paymaster_limits(
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
    CREATE FUNCTION release_paymaster_limit_holds(holds uuid[]) RETURNS void
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
    CREATE FUNCTION settle_paymaster_limit_hold(hold uuid, cost bigint, charged bigint) RETURNS void
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

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION settle_paymaster_limit_hold(uuid, bigint, bigint)`.execute(db);
  await sql`DROP FUNCTION release_paymaster_limit_holds(uuid[])`.execute(db);
  await sql`DROP FUNCTION consume_paymaster_limits(text[], timestamptz[], bigint[], bigint[], text[], uuid, timestamptz, timestamptz, uuid)`.execute(
    db,
  );
  await createConsumeLimitCounters(db);
  await db.schema
    .alterTable('paymaster_merchant_limits')
    .dropColumn('per_client_daily_usd')
    .dropColumn('per_merchant_daily_usd')
    .execute();
  await db.schema.alterTable('paymaster_usage').dropColumn('hold_id').execute();
  await db.schema.dropTable('paymaster_limit_holds').execute();
  await sql`ALTER TABLE paymaster_limit_counters DROP COLUMN held`.execute(db);
}
