import { sql } from 'kysely';
import type { Db } from './client';

/**
 * Grants up to `lease` requests of `limitKey`'s allowance for the minute `windowMinute`, never more
 * than `limit` in total across every caller: one upsert, atomic under concurrent replicas. Resolves
 * with the number granted (0 once the minute's allowance is gone).
 */
export async function leaseRequests(
  db: Db,
  {
    limitKey,
    windowMinute,
    limit,
    lease,
  }: { limitKey: string; windowMinute: number; limit: number; lease: number },
): Promise<number> {
  const first = Math.min(lease, limit);
  const { rows } = await sql<{ last_lease: number }>`
    insert into request_rate_windows as w (limit_key, window_minute, granted, last_lease)
    values (${limitKey}, ${windowMinute}, ${first}, ${first})
    on conflict (limit_key, window_minute) do update
      set granted = w.granted + least(${lease}::int, ${limit}::int - w.granted),
          last_lease = least(${lease}::int, ${limit}::int - w.granted)
      where w.granted < ${limit}::int
    returning last_lease`.execute(db);
  return rows[0]?.last_lease ?? 0;
}

/** Forgets the minutes before `windowMinute` (their leases can no longer be spent). */
export async function deleteRequestRateWindowsBefore(db: Db, windowMinute: number): Promise<void> {
  await db.deleteFrom('request_rate_windows').where('window_minute', '<', String(windowMinute)).execute();
}
