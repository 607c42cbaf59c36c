import { sql } from 'kysely';
import type { Db } from '../../db/client';

/**
 * `count` expired sessions of one merchant, each with one payment option on `chainId` whose deposit
 * address is still in the monitor's late watch: their expiries spread evenly over the `withinSec` before
 * now. Written by two `INSERT … SELECT generate_series` statements (a million rows in seconds, never one
 * round trip per row); addresses are derived from `tag` and the row's number (md5), lower-case, so no
 * one can pay them by accident and two seedings with different tags never share one. Seeded rows, not
 * sessions the API made: `workflow_started_at` is set so no reconciler starts workflows for them.
 */
export async function seedWatchedOptions(
  db: Db,
  {
    chainId,
    network,
    tokenAddress,
    merchantId,
    payoutAddress,
    count,
    tag,
    withinSec = 6 * 24 * 3600,
  }: {
    chainId: number;
    network: string;
    tokenAddress: string;
    merchantId: string;
    payoutAddress: string;
    count: number;
    tag: string;
    withinSec?: number;
  },
): Promise<void> {
  const ids = sql`md5(${tag} || '-session-' || n)::uuid`;
  await sql`
    insert into sessions (id, merchant_id, amount, payment_option_symbols, sandbox_mode, payout_address,
                          status, expires_at, workflow_started_at, created_at, updated_at)
    select ${ids}, ${merchantId}, 10, array['USDC'], true, ${payoutAddress}, 'expired',
           now() - make_interval(secs => ${withinSec}::double precision * n / ${count}), now(),
           now() - interval '8 days', now()
    from generate_series(1, ${count}::integer) n`.execute(db);
  await sql`
    insert into payment_options (session_id, chain_id, network, symbol, token_address, decimals, amount,
                                 deposit_address, payout_address, session_expires_at)
    select ${ids}, ${chainId}, ${network}, 'USDC', ${tokenAddress.toLowerCase()}, 6, 10000000,
           '0x' || substr(md5(${tag} || '-address-' || n), 1, 32) || substr(md5(${tag} || '-tail-' || n), 1, 8),
           ${payoutAddress}, now() - make_interval(secs => ${withinSec}::double precision * n / ${count})
    from generate_series(1, ${count}::integer) n`.execute(db);
}

/** The deposit address `seedWatchedOptions` gave row `n` (1-based) of `tag`. */
export async function seededDepositAddress(db: Db, tag: string, n: number): Promise<string> {
  const { rows } = await sql<{ address: string }>`
    select '0x' || substr(md5(${tag} || '-address-' || ${n}::integer), 1, 32)
           || substr(md5(${tag} || '-tail-' || ${n}::integer), 1, 8) as address`.execute(db);
  return rows[0]!.address;
}
