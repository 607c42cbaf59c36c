import { createHash } from 'node:crypto';
import type { Db } from '../../db/client';
import { findIdempotentResponse, storeIdempotentResponse } from '../../db/idempotencyKeys';
import { badRequest, conflict } from '../httpErrors';

/**
 * Stripe-style `Idempotency-Key` for POST routes: the first request with a key runs in one transaction
 * together with the record of its answer; a repeat with the same body gets that answer again, a repeat
 * with another body 409. Two concurrent first requests race on the record's primary key: the loser
 * rolls back all its writes and answers like a repeat. Keys are scoped per merchant and per operation.
 */

export interface IdempotentAnswer<Body> {
  status: number;
  body: Body;
}

export interface IdempotencyScope {
  merchantId: string;
  /** The operation, e.g. `sessions.create`: the same key may be used once per operation. */
  scope: string;
  /** The request's key (`idempotencyKeyOf`); without one the work simply runs. */
  key: string | undefined;
  /** The request body: a repeat must send the same one (any key order). */
  request: unknown;
}

/**
 * Thrown inside the transaction to roll it back when a concurrent request with the same key won (also by
 * work whose own rows carry the key under a unique constraint and found the winner's row).
 */
export class IdempotencyRace extends Error {}

/** The header's value, validated: printable ASCII, bounded, so it can be stored and compared safely. */
export function idempotencyKeyOf(header: string): string | undefined {
  if (!header) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(header))
    throw badRequest('Idempotency-Key must be 1 to 255 printable ASCII characters');
  return header;
}

/** JSON with sorted keys, so the same body in another key order hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Runs `work` in a transaction with the record of its answer, or answers as the first request with
 * `scope.key` did. `replayed` tells the caller not to repeat side effects that follow the commit.
 */
export async function idempotently<Body>(
  db: Db,
  { merchantId, scope, key, request }: IdempotencyScope,
  work: (trx: Db) => Promise<IdempotentAnswer<Body>>,
): Promise<IdempotentAnswer<Body> & { replayed: boolean }> {
  const requestHash = createHash('sha256').update(canonicalJson(request)).digest('hex');
  const replay = async () => {
    const stored = key && (await findIdempotentResponse(db, { merchantId, scope, key }));
    if (!stored) return undefined;
    if (stored.requestHash !== requestHash)
      throw conflict('Idempotency-Key was already used with a different request body');
    return { status: stored.status, body: stored.body as Body, replayed: true };
  };
  const earlier = await replay();
  if (earlier) return earlier;
  try {
    const answer = await db.transaction().execute(async (trx) => {
      const result = await work(trx);
      if (key && !(await storeIdempotentResponse(trx, { merchantId, scope, key, requestHash, ...result })))
        throw new IdempotencyRace();
      return result;
    });
    return { ...answer, replayed: false };
  } catch (error) {
    if (error instanceof IdempotencyRace) return (await replay())!;
    throw error;
  }
}
