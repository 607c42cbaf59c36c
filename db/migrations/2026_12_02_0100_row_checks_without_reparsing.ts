import { sql, type Kysely } from 'kysely';

/**
 * The CHECK constraints of the rows every signed answer inserts, as calls of IMMUTABLE plpgsql functions
 * (issue 46, "profile again"). Postgres keeps a table's CHECK expressions as node text and reads them back
 * (`stringToNode`, each text constant byte by byte) every time a statement that writes the table starts:
 * perf showed that reading as about a tenth of the backend's CPU under the paymaster bench. A status list
 * of 18 strings cost 11 µs per INSERT, the hold rows' three checks 14 µs; the same conditions inside a
 * function, whose compiled expression stays cached for the session, cost 1.4 µs and 4 µs (a plpgsql loop
 * of 20,000 INSERTs on Postgres 15). Why functions:
 * docs/decisions.md "CHECK constraints on the paymaster's hot rows as functions".
 *
 * The conditions are the same. A new usage status changes `paymaster_usage_status_known` (CREATE OR
 * REPLACE): only statuses are ever added, so the rows already there still pass. The constraints are added
 * NOT VALID and then validated, which reads the table but lets reads through.
 */
const statusKnown = `
    CREATE FUNCTION paymaster_usage_status_known(status text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
      RETURN status IN ('denied_target', 'denied_upstream', 'denied_billing_balance', 'denied_merchant_limit',
        'denied_gas_mode', 'denied_chain', 'denied_entrypoint', 'denied_origin', 'denied_malformed',
        'denied_rate_limit', 'denied_spend_cap', 'denied_global_cap', 'denied_price_unavailable',
        'denied_merchant_rule', 'submitted', 'onchain_success', 'onchain_reverted', 'dropped');
    END
    $$`;

/** A hold's parallel arrays: one entry per held consumption, amounts never negative, known bases. */
const holdTermsValid = `
    CREATE FUNCTION paymaster_hold_terms_valid(
      positions integer[],
      counter_keys text[],
      window_starts timestamptz[],
      amounts bigint[],
      bases text[]
    ) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
      RETURN cardinality(positions) > 0
        AND cardinality(counter_keys) = cardinality(positions)
        AND cardinality(window_starts) = cardinality(positions)
        AND cardinality(amounts) = cardinality(positions)
        AND cardinality(bases) = cardinality(positions)
        AND 0 <= ALL(amounts)
        AND bases <@ ARRAY['cost', 'charged', 'reservation'];
    END
    $$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(statusKnown).execute(db);
  await sql.raw(holdTermsValid).execute(db);
  await sql`ALTER TABLE paymaster_usage
    DROP CONSTRAINT paymaster_usage_status_check,
    ADD CONSTRAINT paymaster_usage_status_check CHECK (paymaster_usage_status_known(status)) NOT VALID`.execute(
    db,
  );
  await sql`ALTER TABLE paymaster_usage VALIDATE CONSTRAINT paymaster_usage_status_check`.execute(db);
  await sql`ALTER TABLE paymaster_operation_holds
    DROP CONSTRAINT paymaster_operation_holds_arrays_check,
    DROP CONSTRAINT paymaster_operation_holds_amounts_check,
    DROP CONSTRAINT paymaster_operation_holds_bases_check,
    ADD CONSTRAINT paymaster_operation_holds_terms_check
      CHECK (paymaster_hold_terms_valid(positions, counter_keys, window_starts, amounts, bases)) NOT VALID`.execute(
    db,
  );
  await sql`ALTER TABLE paymaster_operation_holds VALIDATE CONSTRAINT paymaster_operation_holds_terms_check`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE paymaster_operation_holds
    DROP CONSTRAINT paymaster_operation_holds_terms_check,
    ADD CONSTRAINT paymaster_operation_holds_arrays_check CHECK (
      cardinality(positions) > 0
      AND cardinality(counter_keys) = cardinality(positions)
      AND cardinality(window_starts) = cardinality(positions)
      AND cardinality(amounts) = cardinality(positions)
      AND cardinality(bases) = cardinality(positions)
    ),
    ADD CONSTRAINT paymaster_operation_holds_amounts_check CHECK (0 <= ALL(amounts)),
    ADD CONSTRAINT paymaster_operation_holds_bases_check
      CHECK (bases <@ ARRAY['cost', 'charged', 'reservation'])`.execute(db);
  await sql`ALTER TABLE paymaster_usage
    DROP CONSTRAINT paymaster_usage_status_check,
    ADD CONSTRAINT paymaster_usage_status_check CHECK (status IN ('denied_target', 'denied_upstream',
      'denied_billing_balance', 'denied_merchant_limit', 'denied_gas_mode', 'denied_chain', 'denied_entrypoint',
      'denied_origin', 'denied_malformed', 'denied_rate_limit', 'denied_spend_cap', 'denied_global_cap',
      'denied_price_unavailable', 'denied_merchant_rule', 'submitted', 'onchain_success', 'onchain_reverted',
      'dropped'))`.execute(db);
  await sql`DROP FUNCTION paymaster_hold_terms_valid(integer[], text[], timestamptz[], bigint[], text[])`.execute(
    db,
  );
  await sql`DROP FUNCTION paymaster_usage_status_known(text)`.execute(db);
}
