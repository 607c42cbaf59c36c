import { randomBytes, randomUUID } from 'node:crypto';
import { Migrator, sql } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { dropDatabase, ensureDatabase } from '../dev/services/postgres';
import { testStack } from '../test/harness/stack';
import { createDb, type Db } from './client';
import { countWatchedDepositAddresses, findDepositTargets, findWatchedDepositAddresses } from './deposits';
import { upsertMerchantByWallet } from './merchants';
import { migrations } from './migrations';
import { insertSessionWithOptions, insertSessionWithOptionsAtOnce, type NewPaymentOption } from './sessions';

/**
 * The deposit monitor's watched set (migration 980): each payment option carries its session's expiry, so
 * the set is one index range on payment_options. Sessions made before the migration get theirs copied.
 */

const SESSION_EXPIRY = '2026_11_27_980_payment_options_session_expiry';
const name = `stablepay_watched_${randomBytes(4).toString('hex')}`;
const [CHAIN_A, CHAIN_B] = [84532, 11155111];
const HOUR = 3600_000;
const LATE_WATCH_MS = 7 * 24 * HOUR;
let db: Db;
let merchantId: string;

const address = () => privateKeyToAccount(generatePrivateKey()).address;
const session = (expiresAt: Date) => ({
  id: randomUUID(),
  merchant_id: merchantId,
  amount: '10.00',
  merchant_name: 'Watch Shop',
  line_items: '[]',
  payment_option_symbols: ['USDC'],
  sandbox_mode: true,
  success_url: null,
  payout_address: address(),
  expires_at: expiresAt,
});
const option = (chainId: number, depositAddress: string): NewPaymentOption => ({
  chain_id: chainId,
  network: chainId === CHAIN_A ? 'base-sepolia' : 'ethereum-sepolia',
  symbol: 'USDC',
  token_address: address(),
  decimals: 6,
  amount: '10000000',
  deposit_address: depositAddress,
  payout_address: address(),
});

beforeAll(async () => {
  db = createDb({ connectionString: await ensureDatabase(testStack().adminDatabaseUrl, name) });
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const before = Object.keys(migrations).filter((migration) => migration < SESSION_EXPIRY);
  const { error } = await migrator.migrateTo(before[before.length - 1]!);
  if (error) throw error;
  merchantId = (await upsertMerchantByWallet(db, { walletAddress: address(), payoutAddress: address() })).id;
});
afterAll(async () => {
  await db.destroy();
  await dropDatabase(testStack().adminDatabaseUrl, name);
});

test('migration 980 copies each session’s expiry onto its options; the watched set is the options whose session expired within the late watch', async () => {
  const now = Date.now();
  // Before the migration: a session still open, one that expired a day ago, one that expired eight days ago.
  const rowsBefore = [
    { expiresAt: new Date(now + HOUR), deposit: address() },
    { expiresAt: new Date(now - 24 * HOUR), deposit: address() },
    { expiresAt: new Date(now - 8 * 24 * HOUR), deposit: address() },
  ];
  for (const { expiresAt, deposit } of rowsBefore) {
    const row = session(expiresAt);
    await db.insertInto('sessions').values(row).execute();
    const { chain_id, network, symbol, token_address, decimals, amount, payout_address } = option(
      CHAIN_A,
      deposit,
    );
    await sql`
      INSERT INTO payment_options
        (session_id, chain_id, network, symbol, token_address, decimals, amount, deposit_address, payout_address)
      VALUES (${row.id}, ${chain_id}, ${network}, ${symbol}, ${token_address}, ${decimals}, ${amount}, ${deposit}, ${payout_address})
    `.execute(db);
  }

  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateToLatest();
  expect(error).toBeUndefined();
  const copied = await db
    .selectFrom('payment_options as option')
    .innerJoin('sessions as session', 'session.id', 'option.session_id')
    .select(['option.session_expires_at', 'session.expires_at'])
    .execute();
  expect(copied).toHaveLength(3);
  for (const row of copied) expect(row.session_expires_at.getTime()).toBe(row.expires_at.getTime());

  // After it: both insert paths carry the expiry. One session offers the same address on both chains.
  const shared = address();
  const open = session(new Date(now + 2 * HOUR));
  await insertSessionWithOptions(db, open, [option(CHAIN_A, shared), option(CHAIN_B, shared)]);
  const atOnce = session(new Date(now + 3 * HOUR));
  const onlyB = address();
  await insertSessionWithOptionsAtOnce(db, atOnce, [option(CHAIN_B, onlyB)]);
  const written = await db
    .selectFrom('payment_options')
    .select(['session_id', 'session_expires_at'])
    .where('session_id', 'in', [open.id, atOnce.id])
    .execute();
  expect(written).toHaveLength(3);
  for (const row of written) {
    const expected = row.session_id === open.id ? open.expires_at : atOnce.expires_at;
    expect(row.session_expires_at.getTime()).toBe(expected.getTime());
  }

  const expiringAfter = new Date(now - LATE_WATCH_MS);
  const watchedA = await findWatchedDepositAddresses(db, { chainId: CHAIN_A, expiringAfter });
  expect(watchedA.sort()).toEqual(
    [rowsBefore[0]!.deposit, rowsBefore[1]!.deposit, shared].map((a) => a.toLowerCase()).sort(),
  );
  const watchedB = await findWatchedDepositAddresses(db, { chainId: CHAIN_B, expiringAfter });
  expect(watchedB.sort()).toEqual([shared, onlyB].map((a) => a.toLowerCase()).sort());
});

test('an option cannot be stored without its session’s expiry', async () => {
  const row = session(new Date(Date.now() + HOUR));
  await db.insertInto('sessions').values(row).execute();
  await expect(
    sql`
      INSERT INTO payment_options
        (session_id, chain_id, network, symbol, token_address, decimals, amount, deposit_address, payout_address)
      VALUES (${row.id}, ${CHAIN_A}, 'base-sepolia', 'USDC', ${address()}, 6, '1', ${address()}, ${address()})
    `.execute(db),
  ).rejects.toThrow(/session_expires_at/);
});

test('an expiry changed by hand reaches the options, so the watched set follows it', async () => {
  const now = Date.now();
  const deposit = address();
  const row = session(new Date(now + HOUR));
  await insertSessionWithOptions(db, row, [option(CHAIN_A, deposit)]);
  const expiringAfter = new Date(now - LATE_WATCH_MS);
  expect(await findWatchedDepositAddresses(db, { chainId: CHAIN_A, expiringAfter })).toContain(
    deposit.toLowerCase(),
  );
  await db
    .updateTable('sessions')
    .set({ expires_at: new Date(now - 30 * 24 * HOUR) })
    .where('id', '=', row.id)
    .execute();
  expect(await findWatchedDepositAddresses(db, { chainId: CHAIN_A, expiringAfter })).not.toContain(
    deposit.toLowerCase(),
  );
});

test('the watched count stops one past the switch point, and targets answer only options within the window, the same rule as the watched set', async () => {
  const now = Date.now();
  const chainId = 1; // no other test here writes options on it
  const inWindow = [address(), address(), address()];
  const outside = address();
  for (const deposit of inWindow) {
    await insertSessionWithOptions(db, session(new Date(now - 2 * 24 * HOUR)), [option(chainId, deposit)]);
  }
  await insertSessionWithOptions(db, session(new Date(now - 9 * 24 * HOUR)), [option(chainId, outside)]);
  const expiringAfter = new Date(now - LATE_WATCH_MS);

  expect(await countWatchedDepositAddresses(db, { chainId, expiringAfter, upTo: 10 })).toBe(3);
  expect(await countWatchedDepositAddresses(db, { chainId, expiringAfter, upTo: 3 })).toBe(3);
  // Above the switch point the count stops at upTo + 1: the scan never reads the whole set.
  expect(await countWatchedDepositAddresses(db, { chainId, expiringAfter, upTo: 1 })).toBe(2);

  const recipients = [...inWindow, outside].map((deposit) => deposit.toLowerCase());
  const targets = await findDepositTargets(db, chainId, recipients, expiringAfter);
  expect(targets.map((target) => target.depositAddress.toLowerCase()).sort()).toEqual(
    inWindow.map((deposit) => deposit.toLowerCase()).sort(),
  );
  // Widened to ten days, the older session's address is a target again.
  const widened = await findDepositTargets(db, chainId, recipients, new Date(now - 10 * 24 * HOUR));
  expect(widened).toHaveLength(4);
});
