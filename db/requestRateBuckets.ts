import { sql } from 'kysely';
import type { Db } from './client';

/**
 * Takes up to `lease` tokens from `limitKey`'s shared bucket (capacity `perMinute`, refilled at
 * `perMinute` a minute by the database's clock, so replicas' clocks do not matter): one upsert, atomic
 * under concurrent replicas, never granting a token the bucket does not hold. Resolves with the tokens
 * granted and, when none, the seconds until one is back.
 */
export async function leaseTokens(
  db: Db,
  { limitKey, perMinute, lease }: { limitKey: string; perMinute: number; lease: number },
): Promise<{ granted: number; retryAfterSec?: number }> {
  const first = Math.min(lease, perMinute);
  const available = sql`least(${perMinute}::float8, b.tokens + greatest(0, extract(epoch from clock_timestamp() - b.refilled_at)) * ${perMinute}::float8 / 60)`;
  const { rows } = await sql<{ last_lease: number; tokens: number }>`
    insert into request_rate_buckets as b (limit_key, tokens, refilled_at, last_lease)
    values (${limitKey}, ${perMinute - first}, clock_timestamp(), ${first})
    on conflict (limit_key) do update
      set tokens = ${available} - least(${lease}::int, floor(${available})::int),
          refilled_at = clock_timestamp(),
          last_lease = least(${lease}::int, floor(${available})::int)
    returning last_lease, tokens`.execute(db);
  const { last_lease: granted, tokens } = rows[0]!;
  if (granted > 0) return { granted };
  return { granted: 0, retryAfterSec: Math.max(1, Math.ceil(((1 - tokens) * 60) / perMinute)) };
}

/** Forgets buckets untouched for a minute or more: they are full again, as a missing row is. */
export async function deleteFullRequestRateBuckets(db: Db): Promise<void> {
  await sql`delete from request_rate_buckets where refilled_at < clock_timestamp() - interval '1 minute'`.execute(
    db,
  );
}
