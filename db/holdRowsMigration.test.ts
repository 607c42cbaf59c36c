import { randomBytes, randomUUID } from 'node:crypto';
import { Migrator, sql } from 'kysely';
import { dropDatabase, ensureDatabase } from '../dev/services/postgres';
import { testStack } from '../test/harness/stack';
import { createDb, type Db } from './client';
import { migrations } from './migrations';
import {
  consumeSponsorshipLimits,
  limitCountersUsage,
  releaseLimitHolds,
  settleLimitHold,
} from './paymasterLimits';

/**
 * Migration 960 (one hold row per operation) keeps every hold of migration 202's rows: what each
 * counter counts is the same before and after, and the holds still release, settle and expire.
 */

const ONE_HOLD_ROW = '2026_11_26_960_one_hold_row_per_operation';
const name = `stablepay_holds_${randomBytes(4).toString('hex')}`;
let db: Db;

beforeAll(async () => {
  db = createDb({ connectionString: await ensureDatabase(testStack().adminDatabaseUrl, name) });
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const before = Object.keys(migrations).filter((migration) => migration < ONE_HOLD_ROW);
  const { error } = await migrator.migrateTo(before[before.length - 1]!);
  if (error) throw error;
});
afterAll(async () => {
  await db.destroy();
  await dropDatabase(testStack().adminDatabaseUrl, name);
});

test('migration 960 turns each operation’s hold rows into one row and keeps what every counter counts', async () => {
  const window = new Date('2026-11-26T00:00:00.000Z');
  const key = (kind: string) => `${kind}:${randomBytes(4).toString('hex')}`;
  const [budget, sender] = [key('budget'), key('sender_usd')];
  const counter = (counterKey: string) => ({ key: counterKey, windowStart: window });
  const now = new Date();
  const minutes = (count: number) => new Date(now.getTime() + count * 60_000);
  const hold = (expiresAt: Date) => ({
    holdId: randomUUID(),
    expiresAt,
    now: minutes(-120),
    merchantId: randomUUID(),
  });
  const operation = (budgetAmount: bigint, senderAmount: bigint) => [
    { counter: counter(budget), amount: budgetAmount, limit: 1_000_000n, basis: 'cost' as const },
    { counter: counter(sender), amount: senderAmount, limit: 1_000_000n, basis: 'charged' as const },
  ];
  // Under migration 202's function: a hold released by expiry before the migration, one expired but
  // not yet released, two live ones (one to settle, one to release after the migration).
  const releasedEarlier = hold(minutes(-90));
  const expiredUnreleased = hold(minutes(-30));
  const live = hold(minutes(30));
  const liveToRelease = hold(minutes(45));
  expect(await consumeSponsorshipLimits(db, operation(100n, 110n), releasedEarlier)).toBeUndefined();
  expect(await consumeSponsorshipLimits(db, operation(200n, 220n), expiredUnreleased)).toBeUndefined();
  expect(await consumeSponsorshipLimits(db, operation(300n, 330n), live)).toBeUndefined();
  // Consuming after the first hold's expiry releases it (migration 202 flags its rows).
  expect(
    await consumeSponsorshipLimits(db, operation(400n, 440n), { ...liveToRelease, now: minutes(-60) }),
  ).toBeUndefined();
  const counters = [counter(budget), counter(sender)];
  // What each counter counted under migration 202 (its read, as db/paymasterLimits.ts had it).
  const countedBefore = await Promise.all(
    [budget, sender].map(async (counterKey) => {
      const { rows } = await sql<{ usage: string }>`
        SELECT (counter.used + counter.held - coalesce((
          SELECT sum(h.amount) FROM paymaster_limit_holds AS h
          WHERE h.counter_key = counter.counter_key AND h.window_start = counter.window_start
            AND NOT h.released AND h.expires_at <= ${now.toISOString()}::timestamptz
        ), 0))::text AS usage
        FROM paymaster_limit_counters AS counter
        WHERE counter.counter_key = ${counterKey} AND counter.window_start = ${window.toISOString()}::timestamptz`.execute(
        db,
      );
      return BigInt(rows[0]!.usage);
    }),
  );
  expect(countedBefore).toEqual([700n, 770n]);
  const oldRows = await sql<{ released: boolean }>`
    SELECT released FROM paymaster_limit_holds WHERE counter_key = ANY(${[budget, sender]}::text[])`.execute(
    db,
  );
  expect(oldRows.rows.map((row) => row.released).sort()).toEqual([
    false,
    false,
    false,
    false,
    false,
    false,
    true,
    true,
  ]);

  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateTo(ONE_HOLD_ROW);
  expect(error).toBeUndefined();

  const rows = await db
    .selectFrom('paymaster_operation_holds')
    .select(['hold_id', 'counter_keys', 'amounts', 'positions'])
    .where(
      'hold_id',
      'in',
      [releasedEarlier, expiredUnreleased, live, liveToRelease].map((terms) => terms.holdId),
    )
    .orderBy('expires_at')
    .execute();
  expect(rows).toEqual(
    [releasedEarlier, expiredUnreleased, live, liveToRelease].map((terms, index) => ({
      hold_id: terms.holdId,
      counter_keys: [budget, sender],
      amounts: [String((index + 1) * 100), String((index + 1) * 110)],
      positions: [1, 2],
    })),
  );
  expect(await limitCountersUsage(db, counters, now)).toEqual(countedBefore);

  // The kept holds still work: a settle turns the live one into its actual cost, a release gives the
  // other back, and once past their expiry nothing else counts.
  await settleLimitHold(db, live.holdId, { costMicro: 7n, chargedMicro: 8n });
  expect(await limitCountersUsage(db, counters, now)).toEqual([407n, 448n]);
  await releaseLimitHolds(db, [liveToRelease.holdId]);
  expect(await limitCountersUsage(db, counters, now)).toEqual([7n, 8n]);
  // An expired hold settled after the migration adds its cost without taking anything from `held`.
  await settleLimitHold(db, expiredUnreleased.holdId, { costMicro: 5n, chargedMicro: 6n });
  expect(await limitCountersUsage(db, counters, now)).toEqual([12n, 14n]);
  const held = await db
    .selectFrom('paymaster_limit_counters')
    .select(['counter_key', 'held'])
    .where('counter_key', 'in', [budget, sender])
    .orderBy('counter_key')
    .execute();
  expect(held.map((row) => String(row.held))).toEqual(['0', '0']);
});
