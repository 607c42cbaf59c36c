import type { Db } from './client';

export interface StoredResponse {
  requestHash: string;
  status: number;
  body: unknown;
}

export async function findIdempotentResponse(
  db: Db,
  { merchantId, scope, key }: { merchantId: string; scope: string; key: string },
): Promise<StoredResponse | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body'])
    .where('merchant_id', '=', merchantId)
    .where('scope', '=', scope)
    .where('key', '=', key)
    .executeTakeFirst();
  return row && { requestHash: row.request_hash, status: row.response_status, body: row.response_body };
}

/**
 * Records the response of the first request with this key. Returns false when another request with
 * the same key committed first (a concurrent insert waits for that commit, then conflicts), in which
 * case the caller rolls its work back and answers with the stored response instead.
 */
export async function storeIdempotentResponse(
  trx: Db,
  {
    merchantId,
    scope,
    key,
    requestHash,
    status,
    body,
  }: { merchantId: string; scope: string; key: string; requestHash: string; status: number; body: unknown },
): Promise<boolean> {
  const inserted = await trx
    .insertInto('idempotency_keys')
    .values({
      merchant_id: merchantId,
      scope,
      key,
      request_hash: requestHash,
      response_status: status,
      response_body: JSON.stringify(body),
    })
    .onConflict((conflict) => conflict.columns(['merchant_id', 'scope', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  return inserted !== undefined;
}
