import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { DepositsTable, SessionStatus } from './schema';

export type DepositRow = Selectable<DepositsTable>;

/** A payment option a transfer may be paying: matched by chain, deposit address and token. */
export interface DepositTarget {
  sessionId: string;
  depositAddress: string;
  tokenAddress: string;
  /** Expected base units of this option. */
  expectedAmount: string;
  status: SessionStatus;
  expiresAt: Date;
}

/**
 * The deposit addresses on `chainId` a transfer may still be expected at: those of sessions whose expiry
 * is after `expiringAfter` (open ones, and ended ones within the late-payment watch). Distinct and
 * lower-case; one range of the (chain_id, session_expires_at) index, addresses included, so it costs what
 * the recent sessions cost, not the table.
 */
export async function findWatchedDepositAddresses(
  db: Db,
  { chainId, expiringAfter }: { chainId: number; expiringAfter: Date },
): Promise<string[]> {
  const rows = await db
    .selectFrom('payment_options')
    .select(sql<string>`lower(deposit_address)`.as('address'))
    .distinct()
    .where('chain_id', '=', chainId)
    .where('session_expires_at', '>', expiringAfter)
    .execute();
  return rows.map((row) => row.address);
}

/**
 * How many deposit addresses `findWatchedDepositAddresses` would answer, counted only up to `upTo + 1`:
 * the monitor asks whether the set is small enough for the `to`-filtered scan without reading it. One
 * index-only range of at most `upTo + 1` entries of (chain_id, session_expires_at), whatever the set's
 * size. Options, not distinct addresses: an address shared by two options counts twice (the API gives
 * every option its own address), which can only move the switch to the unfiltered form earlier.
 */
export async function countWatchedDepositAddresses(
  db: Db,
  { chainId, expiringAfter, upTo }: { chainId: number; expiringAfter: Date; upTo: number },
): Promise<number> {
  const row = await sql<{ watched: string }>`
    select count(*)::text as watched from (
      select 1 from payment_options
      where chain_id = ${chainId} and session_expires_at > ${expiringAfter}
      limit ${upTo + 1}
    ) watched`.execute(db);
  return Number(row.rows[0]!.watched);
}

/**
 * The earliest `watch_changed_at` a row not yet visible to a statement run after this one can carry: the
 * start of the oldest transaction open in this database now (a row's stamp is its writer's `now()`, and a
 * transaction invisible to a later snapshot is either open now or starts later), and never later than now
 * − `overlapMs` (the margin for backends this role cannot see and for the server's clock stepping back).
 * Client backends only: autovacuum and replication never write payment options.
 */
function watchHorizon(overlapMs: number) {
  // As text, passed back as text: a JS Date would cut the microseconds (and could round up past a stamp).
  return sql<string>`least(
    now() - make_interval(secs => ${overlapMs / 1000}::double precision),
    (select min(xact_start) from pg_stat_activity
      where datname = current_database() and backend_type = 'client backend' and xact_start is not null))::text`;
}

/**
 * Every deposit address `findWatchedDepositAddresses` would answer, streamed page by page through a cursor
 * (the set is never in memory at once), and the horizon to read changes from afterwards
 * (`findWatchChangesSince`): read before the cursor's snapshot, so every option that snapshot misses
 * carries a stamp at or after it. `expected` (counted first) sizes the caller's filter.
 */
export async function streamWatchedDepositAddresses(
  db: Db,
  {
    chainId,
    expiringAfter,
    overlapMs,
    pageSize = 20_000,
    start,
  }: {
    chainId: number;
    expiringAfter: Date;
    overlapMs: number;
    pageSize?: number;
    /** Called once with the count; answers the page consumer. */
    start: (expected: number) => (addresses: string[]) => void;
  },
): Promise<{ horizon: string; count: number }> {
  return db.transaction().execute(async (trx) => {
    // Read committed: this statement's read of pg_stat_activity comes before the cursor's snapshot.
    const { rows } = await sql<{ horizon: string; expected: string }>`
      select ${watchHorizon(overlapMs)} as horizon,
             (select count(*) from payment_options
              where chain_id = ${chainId} and session_expires_at > ${expiringAfter})::text as expected`.execute(
      trx,
    );
    const consume = start(Number(rows[0]!.expected));
    await sql`
      declare watched_addresses no scroll cursor for
      select lower(deposit_address) as address from payment_options
      where chain_id = ${chainId} and session_expires_at > ${expiringAfter}`.execute(trx);
    let count = 0;
    for (;;) {
      const page = await sql<{
        address: string;
      }>`fetch ${sql.raw(String(pageSize))} from watched_addresses`.execute(trx);
      if (page.rows.length === 0) break;
      count += page.rows.length;
      consume(page.rows.map((row) => row.address));
    }
    await sql`close watched_addresses`.execute(trx);
    return { horizon: rows[0]!.horizon, count };
  });
}

/**
 * The deposit addresses on `chainId` whose options entered or changed in the watch at or after `since` and
 * are still watched (expiring after `expiringAfter`), and the horizon to read from next time (see
 * watchHorizon): one statement through the (chain_id, watch_changed_at) index, whose rows are few (the
 * options created since the last read, plus the overlap).
 */
export async function findWatchChangesSince(
  db: Db,
  {
    chainId,
    since,
    expiringAfter,
    overlapMs,
  }: { chainId: number; since: string; expiringAfter: Date; overlapMs: number },
): Promise<{ addresses: string[]; horizon: string }> {
  const { rows } = await sql<{ horizon: string; addresses: string[] }>`
    select ${watchHorizon(overlapMs)} as horizon,
           array(select lower(deposit_address) from payment_options
                 where chain_id = ${chainId} and watch_changed_at >= ${since}::timestamptz
                   and session_expires_at > ${expiringAfter}) as addresses`.execute(db);
  return { addresses: rows[0]!.addresses, horizon: rows[0]!.horizon };
}

/**
 * The payment options on `chainId` whose deposit address is one of `recipients` (lower-case) and whose
 * session expires after `expiringAfter` (the watch: open sessions and the late window), with their
 * session's state. One array parameter (never one bind parameter per address) through the
 * (chain_id, lower(deposit_address)) index: one query per scanned range, whichever form the scan took,
 * so an address is watched or not by the same rule in both.
 */
export async function findDepositTargets(
  db: Db,
  chainId: number,
  recipients: string[],
  expiringAfter: Date,
): Promise<DepositTarget[]> {
  if (recipients.length === 0) return [];
  const rows = await db
    .selectFrom('payment_options as option')
    .innerJoin('sessions as session', 'session.id', 'option.session_id')
    .select([
      'option.session_id',
      'option.deposit_address',
      'option.token_address',
      'option.amount',
      'session.status',
      'session.expires_at',
    ])
    .where('option.chain_id', '=', chainId)
    .where(sql<string>`lower(option.deposit_address)`, '=', sql<string>`any(${recipients}::text[])`)
    .where('option.session_expires_at', '>', expiringAfter)
    .execute();
  return rows.map((row) => ({
    sessionId: row.session_id,
    depositAddress: row.deposit_address,
    tokenAddress: row.token_address.toLowerCase(),
    expectedAmount: row.amount,
    status: row.status,
    expiresAt: row.expires_at,
  }));
}

/** Records a transfer once per (chain, tx, log); false when it was recorded before (rescans are harmless). */
export async function recordDeposit(
  db: Db,
  deposit: Omit<DepositRow, 'id' | 'settled_at' | 'created_at' | 'block_number'> & { block_number: bigint },
): Promise<boolean> {
  const inserted = await db
    .insertInto('deposits')
    .values({ ...deposit, token_address: deposit.token_address.toLowerCase() })
    .onConflict((conflict) => conflict.columns(['chain_id', 'tx_hash', 'log_index']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export type NewDeposit = Omit<DepositRow, 'id' | 'settled_at' | 'created_at' | 'block_number'> & {
  block_number: bigint;
};

/**
 * Records transfers once per (chain, tx, log) and answers the base units accepted per option (session,
 * token) on `chainId` for `totalsFor` sessions, counting the rows just recorded: one statement, one round
 * trip (one array per column through unnest, so its size does not grow with the rows). Keyed
 * `<sessionId>:<lower-case token>`; options without accepted deposits are absent.
 *
 * The totals add the rows the statement inserted (RETURNING) to the rows it found (its snapshot, taken
 * before the insert): a row recorded by an earlier scan counts once, through the table, and a conflicting
 * row is never returned. A row another transaction commits while this one runs is not counted here; only
 * a second scan of the same range can write one, and that scan signals with its own totals.
 */
export async function recordDepositsWithTotals(
  db: Db,
  { chainId, deposits, totalsFor }: { chainId: number; deposits: NewDeposit[]; totalsFor: string[] },
): Promise<Map<string, bigint>> {
  if (deposits.length === 0) return new Map();
  const column = <T>(pick: (deposit: NewDeposit) => T) => deposits.map(pick);
  const result = await sql<{ session_id: string; token_address: string; total: string }>`
    with recorded as (
      insert into deposits (session_id, chain_id, token_address, deposit_address, amount, tx_hash, log_index, block_number, kind)
      select * from unnest(
        ${column((deposit) => deposit.session_id)}::uuid[],
        ${column((deposit) => deposit.chain_id)}::integer[],
        ${column((deposit) => deposit.token_address.toLowerCase())}::text[],
        ${column((deposit) => deposit.deposit_address)}::text[],
        ${column((deposit) => deposit.amount)}::numeric[],
        ${column((deposit) => deposit.tx_hash)}::text[],
        ${column((deposit) => deposit.log_index)}::integer[],
        ${column((deposit) => deposit.block_number.toString())}::bigint[],
        ${column((deposit) => deposit.kind)}::text[]
      )
      on conflict (chain_id, tx_hash, log_index) do nothing
      returning session_id, chain_id, token_address, amount, kind
    )
    select session_id, token_address, sum(amount)::text as total
    from (
      select session_id, token_address, amount from deposits
      where session_id = any(${totalsFor}::uuid[]) and chain_id = ${chainId} and kind = 'accepted'
      union all
      select session_id, token_address, amount from recorded
      where session_id = any(${totalsFor}::uuid[]) and chain_id = ${chainId} and kind = 'accepted'
    ) accepted
    group by session_id, token_address`.execute(db);
  return new Map(result.rows.map((row) => [`${row.session_id}:${row.token_address}`, BigInt(row.total)]));
}

/** Base units accepted so far for one option of a session (what the customer has paid in that token there). */
export async function acceptedTotal(
  db: Db,
  { sessionId, chainId, tokenAddress }: { sessionId: string; chainId: number; tokenAddress: string },
): Promise<bigint> {
  const row = await db
    .selectFrom('deposits')
    .select(sql<string>`coalesce(sum(amount), 0)::text`.as('total'))
    .where('session_id', '=', sessionId)
    .where('chain_id', '=', chainId)
    .where('token_address', '=', tokenAddress.toLowerCase())
    .where('kind', '=', 'accepted')
    .executeTakeFirstOrThrow();
  return BigInt(row.total);
}

/** Deposits of a session that no flush has swept yet, oldest first. */
export async function findUnsettledDeposits(db: Db, sessionId: string): Promise<DepositRow[]> {
  return db
    .selectFrom('deposits')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('settled_at', 'is', null)
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
}

/** Whether the transfer (chain, tx, log) was swept by a recorded flush. */
export async function isDepositSettled(
  db: Db,
  { chainId, txHash, logIndex }: { chainId: number; txHash: string; logIndex: number },
): Promise<boolean> {
  const row = await db
    .selectFrom('deposits')
    .select('settled_at')
    .where('chain_id', '=', chainId)
    .where('tx_hash', '=', txHash)
    .where('log_index', '=', logIndex)
    .executeTakeFirst();
  return row?.settled_at != null;
}

export async function markDepositsSettled(
  db: Db,
  { sessionId, chainId, tokenAddress }: { sessionId: string; chainId: number; tokenAddress: string },
): Promise<void> {
  await db
    .updateTable('deposits')
    .set({ settled_at: new Date() })
    .where('session_id', '=', sessionId)
    .where('chain_id', '=', chainId)
    .where('token_address', '=', tokenAddress.toLowerCase())
    .where('settled_at', 'is', null)
    .execute();
}

export async function readCheckpoint(db: Db, monitorId: string): Promise<bigint | undefined> {
  const row = await db
    .selectFrom('chain_monitor_checkpoints')
    .select('last_scanned_block')
    .where('monitor_id', '=', monitorId)
    .executeTakeFirst();
  return row ? BigInt(row.last_scanned_block) : undefined;
}

export async function writeCheckpoint(
  db: Db,
  {
    monitorId,
    chainId,
    block,
    blockTime,
  }: { monitorId: string; chainId: number; block: bigint; blockTime?: Date },
): Promise<void> {
  await db
    .insertInto('chain_monitor_checkpoints')
    .values({
      monitor_id: monitorId,
      chain_id: chainId,
      last_scanned_block: block,
      last_scanned_block_time: blockTime ?? null,
    })
    .onConflict((conflict) =>
      conflict.column('monitor_id').doUpdateSet({
        last_scanned_block: block,
        last_scanned_block_time: blockTime ?? null,
        updated_at: new Date(),
      }),
    )
    .execute();
}

/** The scanned-block timestamps of these monitors' checkpoints (null when written before it was kept). */
export async function readCheckpointTimes(db: Db, monitorIds: string[]): Promise<Map<string, Date | null>> {
  if (monitorIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('chain_monitor_checkpoints')
    .select(['monitor_id', 'last_scanned_block_time'])
    .where('monitor_id', '=', sql<string>`any(${monitorIds})`)
    .execute();
  return new Map(rows.map((row) => [row.monitor_id, row.last_scanned_block_time]));
}

/** A covering payment read back from the recorded rows: the fields of the monitor's deposit signal. */
export interface RecordedCoveringDeposit {
  chainId: number;
  /** The option's token address, as the monitor signals it. */
  token: string;
  /** The option's accepted total once this transfer counted (base units, decimal string; ≥ its amount). */
  amount: string;
  txHash: string;
  blockNumber: string;
  logIndex: number;
  depositAddress: string;
  decimals: number;
}

/**
 * The accepted transfer that first covered one of the session's options (block and log order, per option),
 * with the option's total at that point: the deposit signal the chain monitor sent, read back from the rows
 * it recorded. The reconciler gives it to a workflow started after the signal found none running.
 */
export async function findCoveringAcceptedDeposit(
  db: Db,
  sessionId: string,
): Promise<RecordedCoveringDeposit | undefined> {
  const rows = await db
    .selectFrom('deposits as deposit')
    .innerJoin('payment_options as option', (join) =>
      join
        .onRef('option.session_id', '=', 'deposit.session_id')
        .onRef('option.chain_id', '=', 'deposit.chain_id')
        .on(sql`lower(option.token_address)`, '=', sql.ref('deposit.token_address'))
        .on(sql`lower(option.deposit_address)`, '=', sql`lower(deposit.deposit_address)`),
    )
    .select([
      'deposit.chain_id',
      'deposit.amount',
      'deposit.tx_hash',
      'deposit.log_index',
      'deposit.block_number',
      'option.token_address',
      'option.deposit_address',
      'option.decimals',
      'option.amount as expected',
    ])
    .where('deposit.session_id', '=', sessionId)
    .where('deposit.kind', '=', 'accepted')
    .orderBy('deposit.block_number')
    .orderBy('deposit.log_index')
    .execute();
  const totals = new Map<string, bigint>();
  for (const row of rows) {
    const option = `${row.chain_id}:${row.token_address.toLowerCase()}`;
    const total = (totals.get(option) ?? 0n) + BigInt(row.amount);
    totals.set(option, total);
    if (total < BigInt(row.expected)) continue;
    return {
      chainId: row.chain_id,
      token: row.token_address,
      amount: total.toString(),
      txHash: row.tx_hash,
      blockNumber: String(row.block_number),
      logIndex: row.log_index,
      depositAddress: row.deposit_address,
      decimals: row.decimals,
    };
  }
  return undefined;
}
