import { sql, type Kysely } from 'kysely';

/**
 * Service-wide request rates (issue 31): one token bucket per limited key (`login:<figure>:<ip>`,
 * `paymasterClient:<figure>:<client id>`) shared by every api replica, which take its tokens in leases
 * (api/requestRateLeases.ts). No row is a full bucket. UNLOGGED: a crash of the database refills every
 * bucket (one burst allowed again), which is cheaper than logging every lease.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create unlogged table request_rate_buckets (
      limit_key text primary key,
      tokens double precision not null,
      refilled_at timestamptz not null,
      last_lease integer not null
    )`.execute(db);
  await sql`create index request_rate_buckets_refilled_at on request_rate_buckets (refilled_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_rate_buckets').execute();
}
