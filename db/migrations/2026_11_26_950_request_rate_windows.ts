import { sql, type Kysely } from 'kysely';

/**
 * Service-wide request rates (issue 31): one row per limited key (`login:<figure>:<ip>`,
 * `paymasterClient:<figure>:<client id>`) and minute, counting the requests granted to api replicas in
 * leases (api/requestRateLeases.ts). UNLOGGED: a crash of the database forgets the current minute's
 * counts (one window's allowance granted again), which is cheaper than logging every lease.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create unlogged table request_rate_windows (
      limit_key text not null,
      window_minute bigint not null,
      granted integer not null,
      last_lease integer not null,
      primary key (limit_key, window_minute)
    )`.execute(db);
  await sql`create index request_rate_windows_minute on request_rate_windows (window_minute)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_rate_windows').execute();
}
