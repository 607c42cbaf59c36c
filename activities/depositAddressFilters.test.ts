import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { dropDatabase, ensureDatabase } from '../dev/services/postgres';
import { testStack } from '../test/harness/stack';
import { createDb, type Db } from '../db/client';
import { streamWatchedDepositAddresses } from '../db/deposits';
import { upsertMerchantByWallet } from '../db/merchants';
import { migrateToLatest } from '../db/migrate';
import { insertSessionWithOptions } from '../db/sessions';
import { createDepositAddressFilters } from './depositAddressFilters';

/**
 * The address filters' reads against real Postgres (migration 0550's stamp and trigger): what a read can
 * miss is taken by the next one, including an option whose transaction was open during the read.
 */
const CHAIN = 84532;
const HOUR = 3600_000;
const name = `stablepay_filters_${randomBytes(4).toString('hex')}`;
let db: Db;
let merchantId: string;

const randomAddress = () => `0x${randomBytes(20).toString('hex')}`;
const lateWindowStart = () => new Date(Date.now() - 7 * 24 * HOUR);

/** A session expiring at `expiresAt` with one option on CHAIN at a fresh address, written through `on`. */
async function insertOption(on: Db, expiresAt = new Date(Date.now() + HOUR)): Promise<string> {
  const depositAddress = randomAddress();
  await insertSessionWithOptions(
    on,
    {
      id: randomUUID(),
      merchant_id: merchantId,
      amount: '10.00',
      merchant_name: 'Filter Shop',
      line_items: '[]',
      payment_option_symbols: ['USDC'],
      sandbox_mode: true,
      success_url: null,
      payout_address: randomAddress(),
      expires_at: expiresAt,
    },
    [
      {
        chain_id: CHAIN,
        network: 'base-sepolia',
        symbol: 'USDC',
        token_address: randomAddress(),
        decimals: 6,
        amount: '10000000',
        deposit_address: depositAddress,
        payout_address: randomAddress(),
      },
    ],
  );
  return depositAddress;
}

beforeAll(async () => {
  db = createDb({ connectionString: await ensureDatabase(testStack().adminDatabaseUrl, name) });
  await migrateToLatest(db);
  merchantId = (
    await upsertMerchantByWallet(db, { walletAddress: randomAddress(), payoutAddress: randomAddress() })
  ).id;
});
afterAll(async () => {
  await db.destroy();
  await dropDatabase(testStack().adminDatabaseUrl, name);
});

test('an option whose inserting transaction was open during a read (begun before it) passes the next read, with no overlap at all', async () => {
  const filters = createDepositAddressFilters({ db, overlapMs: 0 });
  const before = await insertOption(db);
  expect(await filters.candidates(CHAIN, lateWindowStart(), [before])).toEqual([before]);

  let commit!: () => void;
  const committed = new Promise<void>((resolve) => (commit = resolve));
  let inserted!: (address: string) => void;
  const insertedAddress = new Promise<string>((resolve) => (inserted = resolve));
  const transaction = db.transaction().execute(async (trx) => {
    inserted(await insertOption(trx));
    await committed;
  });
  const inFlight = await insertedAddress;
  // The read runs while the insert is uncommitted: its snapshot cannot see the row, whose stamp (the
  // transaction's start) is older than this read's own now(). A horizon of "now" would skip it for ever.
  expect(await filters.candidates(CHAIN, lateWindowStart(), [inFlight])).toEqual([]);
  commit();
  await transaction;
  expect(await filters.candidates(CHAIN, lateWindowStart(), [inFlight, before])).toEqual([inFlight, before]);
  expect(filters.describe(CHAIN)!.added).toBeGreaterThanOrEqual(2);
});

test('the watch stamp is the trigger’s: a past value written is replaced; an expiry moved earlier keeps it, one moved later renews it', async () => {
  const address = await insertOption(db);
  const stampOf = async () =>
    (
      await sql<{ stamp: string; now: string }>`
        select watch_changed_at::text as stamp, now()::text as now from payment_options
        where deposit_address = ${address}`.execute(db)
    ).rows[0]!;
  const inserted = await stampOf();
  await sql`update payment_options set watch_changed_at = now() - interval '10 days' where deposit_address = ${address}`.execute(
    db,
  );
  expect((await stampOf()).stamp).toBe(inserted.stamp);

  const sessionId = (
    await db
      .selectFrom('payment_options')
      .select('session_id')
      .where('deposit_address', '=', address)
      .executeTakeFirstOrThrow()
  ).session_id;
  await sql`update sessions set expires_at = now() - interval '2 days' where id = ${sessionId}`.execute(db);
  expect((await stampOf()).stamp).toBe(inserted.stamp);
  const moved = await db.transaction().execute(async (trx) => {
    await sql`update sessions set expires_at = now() + interval '2 hours' where id = ${sessionId}`.execute(
      trx,
    );
    return (await sql<{ now: string }>`select now()::text as now`.execute(trx)).rows[0]!.now;
  });
  expect((await stampOf()).stamp).toBe(moved);
});

test('an option moved back into the late window by hand passes the next read; a rebuild drops options that left the window', async () => {
  const filters = createDepositAddressFilters({ db });
  const outside = await insertOption(db, new Date(Date.now() - 8 * 24 * HOUR));
  const leaving = await insertOption(db);
  expect(await filters.candidates(CHAIN, lateWindowStart(), [outside, leaving])).toEqual([leaving]);

  await sql`update sessions set expires_at = now() + interval '1 hour'
            where id = (select session_id from payment_options where deposit_address = ${outside})`.execute(
    db,
  );
  await sql`update sessions set expires_at = now() - interval '8 days'
            where id = (select session_id from payment_options where deposit_address = ${leaving})`.execute(
    db,
  );
  // Not rebuilt: the one that left is still let through (Postgres says no); the one back in is read in.
  expect(await filters.candidates(CHAIN, lateWindowStart(), [outside, leaving])).toEqual([outside, leaving]);
  await filters.rebuild(CHAIN, lateWindowStart());
  expect(filters.mightContain(CHAIN, outside)).toBe(true);
  expect(filters.mightContain(CHAIN, leaving)).toBe(false);
});

test('the build streams the watched set page by page, counting it first', async () => {
  const watched = await db
    .selectFrom('payment_options')
    .select(sql<string>`lower(deposit_address)`.as('address'))
    .where('chain_id', '=', CHAIN)
    .where('session_expires_at', '>', lateWindowStart())
    .execute();
  const pages: string[][] = [];
  let expected = -1;
  const { count } = await streamWatchedDepositAddresses(db, {
    chainId: CHAIN,
    expiringAfter: lateWindowStart(),
    overlapMs: 0,
    pageSize: 2,
    start: (total) => {
      expected = total;
      return (page) => pages.push(page);
    },
  });
  expect(expected).toBe(watched.length);
  expect(count).toBe(watched.length);
  expect(pages.every((page) => page.length <= 2)).toBe(true);
  expect(pages.flat().sort()).toEqual(watched.map((row) => row.address).sort());
});
