import { sql, type Kysely } from 'kysely';
import { recordSignedOperation } from './2026_11_28_1201_usage_policy_id';

/**
 * The repeat of a signing request (docs/paymaster.md "Order of checks", step 13) found where the operation
 * is recorded (issue 46): `record_signed_paymaster_operation` first looks for a signed row with the same
 * request fingerprint on the chain and entry point (the first by `seq`, as the decision reads did before
 * the signer), then for the same userOpHash, and answers its stored result, consuming and inserting
 * nothing. The api no longer reads the fingerprint before signing, so a signed answer takes one Postgres
 * round trip. Same signature and behaviour otherwise (migration 1201).
 */
export const recordWithRepeat = `
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
    LANGUAGE plpgsql AS $$
    DECLARE
      row_chain integer := (usage->>'chain_id')::integer;
      row_entry_point text := usage->>'entry_point';
      row_hash text := usage->>'user_op_hash';
      row_fingerprint text := usage->>'request_fingerprint';
    BEGIN
      refused := 0;
      IF row_fingerprint IS NOT NULL THEN
        SELECT existing.signed_result INTO stored_result FROM paymaster_usage AS existing
        WHERE existing.chain_id = row_chain AND existing.entry_point = row_entry_point
          AND existing.request_fingerprint = row_fingerprint AND existing.signed_result IS NOT NULL
        ORDER BY existing.seq LIMIT 1;
        IF FOUND THEN
          RETURN;
        END IF;
      END IF;
      SELECT existing.signed_result INTO stored_result FROM paymaster_usage AS existing
      WHERE existing.chain_id = row_chain AND existing.entry_point = row_entry_point
        AND existing.user_op_hash = row_hash AND existing.signed_result IS NOT NULL
      ORDER BY existing.seq LIMIT 1;
      IF FOUND THEN
        RETURN;
      END IF;
      BEGIN
        refused := consume_paymaster_limits(counter_keys, window_starts, amounts, limits, bases, hold,
          hold_expires_at, now_at, balance_merchant);
        IF refused <> 0 THEN
          RETURN;
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
          RAISE EXCEPTION 'operation already recorded';
        END IF;
      EXCEPTION WHEN raise_exception THEN
        -- A concurrent identical request recorded it first: what this block consumed is rolled back.
        SELECT existing.signed_result INTO stored_result FROM paymaster_usage AS existing
        WHERE existing.chain_id = row_chain AND existing.entry_point = row_entry_point
          AND existing.user_op_hash = row_hash AND existing.signed_result IS NOT NULL
        ORDER BY existing.seq LIMIT 1;
        IF stored_result IS NULL THEN
          RAISE EXCEPTION 'user operation % conflicts with a row that has no signed result', row_hash;
        END IF;
      END;
    END
    $$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(recordWithRepeat).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw(recordSignedOperation(true)).execute(db);
}
