import { sql } from 'kysely';
import type { Db } from './client';

/**
 * The counters' reason for a request refused for its Origin (security review III, finding 4): counted
 * beside the malformed requests, told apart from them by this reason. Every other reason is a malformed
 * request's.
 */
export const ORIGIN_DENIAL_REASON = 'paymaster_origin_not_allowed';

/** Which of the counted refusals a tally adds up. */
export type RefusedRequestKind = 'malformed' | 'origin';

/**
 * Adds one malformed request (or origin denial) to the client's counter of the current UTC hour (Postgres' clock, as the
 * usage rows' created_at), for that reason.
 */
export async function countMalformedRequest(
  db: Db,
  { merchantId, clientId, reason }: { merchantId: string; clientId: string; reason: string },
): Promise<void> {
  await db
    .insertInto('paymaster_malformed_requests')
    .values({
      client_id: clientId,
      hour: sql<Date>`date_trunc('hour', now(), 'UTC')`,
      reason,
      merchant_id: merchantId,
      count: 1,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['client_id', 'hour', 'reason'])
        .doUpdateSet({ count: sql`paymaster_malformed_requests.count + 1` }),
    )
    .execute();
}

/**
 * The merchant's malformed requests (`kind` malformed) or origin denials (`kind` origin) per client in the
 * hours that start at or after the hour `since` falls in (every hour when undefined), most first.
 */
export async function tallyRefusedRequests(
  db: Db,
  { merchantId, since, kind }: { merchantId: string; since?: Date; kind: RefusedRequestKind },
): Promise<{ clientId: string; count: number }[]> {
  let query = db
    .selectFrom('paymaster_malformed_requests')
    .select(['client_id', sql<string>`sum(count)::text`.as('count')])
    .where('merchant_id', '=', merchantId)
    .where('reason', kind === 'origin' ? '=' : '<>', ORIGIN_DENIAL_REASON);
  if (since !== undefined)
    query = query.where(
      'hour',
      '>=',
      sql<Date>`date_trunc('hour', ${since.toISOString()}::timestamptz, 'UTC')`,
    );
  const rows = await query
    .groupBy('client_id')
    .orderBy(sql`sum(count)`, 'desc')
    .orderBy('client_id')
    .execute();
  return rows.map((row) => ({ clientId: row.client_id, count: Number(row.count) }));
}
