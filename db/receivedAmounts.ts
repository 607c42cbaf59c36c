import { fromBaseUnits } from '../money/baseUnits';
import type { Db } from './client';

/**
 * What a session received (issue 41, `receivedAmount`; docs/service-contract.md): every transfer the deposit monitor
 * recorded into one of its payment options, on time or late, each stablecoin at par, in decimal USD and
 * exact (the token's base units over its decimals, no rounding). Late transfers count: they are money the
 * customer sent to this session, which the merchant may settle or refund.
 */

/** Enough fraction digits for every supported token (USDe has 18): the sum of mixed tokens stays exact. */
const SUM_DECIMALS = 18;

/** Base units of several tokens at par as one exact decimal USD string ("0" when empty). */
export function sumAtPar(transfers: readonly { amount: string; decimals: number }[]): string {
  let total = 0n;
  for (const { amount, decimals } of transfers)
    total += BigInt(amount) * 10n ** BigInt(SUM_DECIMALS - decimals);
  return fromBaseUnits(total, SUM_DECIMALS);
}

/** The exact difference `minuend − subtrahend` of two decimal USD strings (e.g. received − amount). */
export function usdDifference(minuend: string, subtrahend: string): string {
  return fromBaseUnits(toScaled(minuend) - toScaled(subtrahend), SUM_DECIMALS);
}

/** Whether decimal USD string `left` is more than `right`. */
export function usdExceeds(left: string, right: string): boolean {
  return toScaled(left) > toScaled(right);
}

function toScaled(value: string): bigint {
  const [whole, fraction = ''] = value.split('.');
  return BigInt(whole! + fraction.padEnd(SUM_DECIMALS, '0'));
}

/**
 * Each of these sessions' received amount; a session with no recorded transfer reads "0". With `kind`,
 * only the transfers the monitor recorded as such (`late`: after the session stopped taking payment).
 */
export async function receivedAmountsOf(
  db: Db,
  sessionIds: readonly string[],
  { kind }: { kind?: 'accepted' | 'late' } = {},
): Promise<Map<string, string>> {
  const received = new Map(sessionIds.map((id) => [id, [] as { amount: string; decimals: number }[]]));
  if (sessionIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('deposits as d')
    .innerJoin('payment_options as o', (join) =>
      join
        .onRef('o.session_id', '=', 'd.session_id')
        .onRef('o.chain_id', '=', 'd.chain_id')
        .on((eb) => eb(eb.fn('lower', ['o.token_address']), '=', eb.ref('d.token_address'))),
    )
    .select(['d.session_id', 'd.amount', 'o.decimals'])
    .where('d.session_id', 'in', [...sessionIds])
    .$if(kind !== undefined, (query) => query.where('d.kind', '=', kind!))
    .execute();
  for (const row of rows) received.get(row.session_id)!.push(row);
  return new Map([...received].map(([id, transfers]) => [id, sumAtPar(transfers)]));
}

/** One session's received amount. */
export async function receivedAmountOf(
  db: Db,
  sessionId: string,
  filter: { kind?: 'accepted' | 'late' } = {},
): Promise<string> {
  return (await receivedAmountsOf(db, [sessionId], filter)).get(sessionId)!;
}
