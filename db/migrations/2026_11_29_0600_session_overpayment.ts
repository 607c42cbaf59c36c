import { sql, type Kysely } from 'kysely';

/**
 * `overpayment` chosen at session creation (issue 41; docs/decisions.md "Sessions: overpayment hold"): `settle`
 * (every session before, and the default) sweeps everything paid to the merchant; `hold` gives the session capped
 * forwarders (contracts/CappedForwarder.sol) whose flushes settle at most its amount, the surplus staying there for
 * a refund the payout address signs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('overpayment', 'text', (column) =>
      column
        .notNull()
        .defaultTo('settle')
        .check(sql`overpayment in ('settle', 'hold')`),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('overpayment').execute();
}
