import { sql, type Kysely } from 'kysely';

/**
 * Forwarder refunds relayed by the operator (issue 41). A forwarder refund whose destination is known keeps
 * the forwarder it is paid from and the payout address that must sign it (copied from the payment option, so
 * the refund object can show what to sign without a join). The payout address's signature is stored when the
 * authorization is accepted; the relay transaction is signed with the operator's next nonce and recorded
 * (raw bytes, hash, nonce) before it is broadcast, as a flush is, so a restarted worker brings that same
 * transaction to a receipt instead of sending another. `relay_gas_wei` is what the relay cost the operator
 * (gasUsed × effectiveGasPrice), charged on mainnets at the ETH/USD price and markup fixed when the refund
 * was authorized (docs/decisions.md "Forwarder refunds: authorization, relay and gas").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('refunds')
    .addColumn('forwarder_address', 'text')
    .addColumn('payout_address', 'text')
    .addColumn('authorization_signature', 'text')
    .addColumn('relay_raw_tx', 'text')
    .addColumn('relay_nonce', sql`numeric(78,0)`)
    .addColumn('relay_gas_wei', sql`numeric(78,0)`)
    // Mainnets: the ETH/USD price and markup the relay's gas is charged at, fixed when it is authorized.
    .addColumn('relay_eth_usd_price', sql`numeric(20,8)`)
    .addColumn('relay_markup_bps', 'integer')
    .execute();
  // A forwarder refund that knows its destination knows where it is paid from and who signs it.
  await sql`
    UPDATE refunds r SET forwarder_address = lower(o.deposit_address), payout_address = o.payout_address
    FROM payment_options o
    WHERE r.source = 'forwarder' AND r.chain_id IS NOT NULL AND o.session_id = r.session_id
      AND o.chain_id = r.chain_id AND lower(o.token_address) = r.token_address`.execute(db);
  await db.schema
    .alterTable('refunds')
    .addCheckConstraint(
      'refunds_forwarder_check',
      sql`source <> 'forwarder' OR chain_id IS NULL OR (forwarder_address IS NOT NULL AND payout_address IS NOT NULL)`,
    )
    .execute();
  // Processing on the forwarder means authorized: the signature is what the relay sends.
  await db.schema
    .alterTable('refunds')
    .addCheckConstraint(
      'refunds_authorized_check',
      sql`source <> 'forwarder' OR status NOT IN ('processing', 'succeeded') OR authorization_signature IS NOT NULL`,
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('refunds').dropConstraint('refunds_authorized_check').execute();
  await db.schema.alterTable('refunds').dropConstraint('refunds_forwarder_check').execute();
  await db.schema
    .alterTable('refunds')
    .dropColumn('forwarder_address')
    .dropColumn('payout_address')
    .dropColumn('authorization_signature')
    .dropColumn('relay_raw_tx')
    .dropColumn('relay_nonce')
    .dropColumn('relay_gas_wei')
    .dropColumn('relay_eth_usd_price')
    .dropColumn('relay_markup_bps')
    .execute();
}
