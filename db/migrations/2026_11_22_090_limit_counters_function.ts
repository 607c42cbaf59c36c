import { sql, type Kysely } from 'kysely';

/**
 * Consumes an operation's sponsorship limit counters in one round trip, all or nothing: each counter is
 * the same conditional upsert as before (the row lock serialises concurrent requests, the WHERE refuses
 * the one that would overshoot), in the caller's order (a fixed lock order: no deadlocks). The first
 * refusal raises inside the block, which rolls back what the earlier counters took before any other
 * transaction could see it; the function then answers that counter's 1-based position (0 = consumed).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION consume_paymaster_limit_counters(
      counter_keys text[],
      window_starts timestamptz[],
      amounts bigint[],
      limits bigint[]
    ) RETURNS integer
    LANGUAGE plpgsql AS $$
    DECLARE
      position integer;
      refused integer := 0;
    BEGIN
      BEGIN
        FOR position IN 1 .. coalesce(array_length(counter_keys, 1), 0) LOOP
          IF amounts[position] > limits[position] THEN
            refused := position;
            RAISE EXCEPTION 'sponsorship limit refused';
          END IF;
          INSERT INTO paymaster_limit_counters AS counter (counter_key, window_start, used)
          VALUES (counter_keys[position], window_starts[position], amounts[position])
          ON CONFLICT (counter_key, window_start)
          DO UPDATE SET used = counter.used + excluded.used
          WHERE counter.used + excluded.used <= limits[position];
          IF NOT FOUND THEN
            refused := position;
            RAISE EXCEPTION 'sponsorship limit refused';
          END IF;
        END LOOP;
      EXCEPTION WHEN raise_exception THEN
        -- Local variables keep their values; the block's writes are rolled back.
        RETURN refused;
      END;
      RETURN 0;
    END
    $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION consume_paymaster_limit_counters(text[], timestamptz[], bigint[], bigint[])`.execute(
    db,
  );
}
