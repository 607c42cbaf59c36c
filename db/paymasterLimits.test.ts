import { randomBytes, randomUUID } from 'node:crypto';
import { testStack } from '../test/harness/stack';
import { createDb, type Db } from './client';
import { creditPrepaidBalance } from './prepaidLedger';
import { sql } from 'kysely';
import {
  type CounterConsumption,
  consumeSponsorshipLimits,
  counterReadStats,
  type HoldTerms,
  type LimitCounter,
  limitCountersUsage,
  releaseLimitHolds,
  settleLimitHold,
} from './paymasterLimits';

/**
 * consume_paymaster_limits: every counter or none, never past a limit under concurrency; dollar holds
 * that stop counting at their expiry, are given back by a release and become the actual amount on settle.
 */

let db: Db;
beforeAll(() => {
  db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 10 });
});
afterAll(() => db.destroy());

const WINDOW = new Date('2026-11-22T10:00:00.000Z');
const NOW = new Date('2026-11-22T10:30:00.000Z');
const counter = (name: string): LimitCounter => ({
  key: `test:${name}:${randomBytes(6).toString('hex')}`,
  windowStart: WINDOW,
});
/** A merchant id that owns no balance (holds other than reservations never read it). */
const NO_MERCHANT = '00000000-0000-0000-0000-000000000000';
const terms = (overrides: Partial<HoldTerms> = {}): HoldTerms => ({
  holdId: randomUUID(),
  expiresAt: new Date(NOW.getTime() + 600_000),
  now: NOW,
  merchantId: NO_MERCHANT,
  ...overrides,
});
const usage = async (...counters: LimitCounter[]) => limitCountersUsage(db, counters, NOW);

describe('consumeSponsorshipLimits', () => {
  test('consumes every counter when all fit, and nothing when a later one refuses', async () => {
    const [budget, senderUsd, senderOps] = [counter('budget'), counter('usd'), counter('ops')];
    const operation = (ops: bigint): CounterConsumption[] => [
      { counter: budget, amount: 700n, limit: 10_000n, basis: 'cost' },
      { counter: senderUsd, amount: 800n, limit: 10_000n, basis: 'charged' },
      { counter: senderOps, amount: 1n, limit: ops, basis: 'ops' },
    ];
    expect(await consumeSponsorshipLimits(db, operation(2n), terms())).toBeUndefined();
    expect(await consumeSponsorshipLimits(db, operation(2n), terms())).toBeUndefined();
    // The third operation breaks the ops limit (index 2): the two counters before it keep their totals.
    expect(await consumeSponsorshipLimits(db, operation(2n), terms())).toBe(2);
    expect(await usage(budget, senderUsd, senderOps)).toEqual([1400n, 1600n, 2n]);
  });

  test('refuses a first amount larger than its limit without holding anything', async () => {
    const fresh = counter('fresh');
    expect(
      await consumeSponsorshipLimits(
        db,
        [{ counter: fresh, amount: 11n, limit: 10n, basis: 'cost' }],
        terms(),
      ),
    ).toBe(0);
    expect(await usage(fresh)).toEqual([0n]);
    expect(
      await consumeSponsorshipLimits(
        db,
        [{ counter: fresh, amount: 10n, limit: 10n, basis: 'cost' }],
        terms(),
      ),
    ).toBeUndefined();
    expect(await usage(fresh)).toEqual([10n]);
  });

  test('nothing to consume is consumed', async () => {
    expect(await consumeSponsorshipLimits(db, [], terms())).toBeUndefined();
  });

  test('a hold stops counting at its expiry; a release gives it back at once; a settle leaves the actual amount', async () => {
    const budget = counter('budget');
    const hold = (expiresAt: Date) => terms({ expiresAt });
    const soon = new Date(NOW.getTime() + 1_000);
    const expiring = hold(soon);
    const released = hold(new Date(NOW.getTime() + 600_000));
    const settled = hold(new Date(NOW.getTime() + 600_000));
    for (const holdTerms of [expiring, released, settled])
      expect(
        await consumeSponsorshipLimits(
          db,
          [{ counter: budget, amount: 30n, limit: 90n, basis: 'cost' }],
          holdTerms,
        ),
      ).toBeUndefined();
    expect(await usage(budget)).toEqual([90n]);
    expect(await limitCountersUsage(db, [budget], soon)).toEqual([60n]);

    await releaseLimitHolds(db, [released.holdId]);
    expect(await usage(budget)).toEqual([60n]);
    await settleLimitHold(db, settled.holdId, { costMicro: 7n, chargedMicro: 8n });
    expect(await usage(budget)).toEqual([37n]);
    // Settling or releasing again changes nothing.
    await settleLimitHold(db, settled.holdId, { costMicro: 7n, chargedMicro: 8n });
    await releaseLimitHolds(db, [released.holdId]);
    expect(await usage(budget)).toEqual([37n]);

    // Past the first hold's expiry it no longer counts: 7 settled + 83 ≤ 90.
    expect(
      await consumeSponsorshipLimits(
        db,
        [{ counter: budget, amount: 83n, limit: 90n, basis: 'cost' }],
        terms({ now: soon }),
      ),
    ).toBeUndefined();
    // The expired hold is settled later all the same (its operation was included before it expired).
    await settleLimitHold(db, expiring.holdId, { costMicro: 5n, chargedMicro: 6n });
    expect(await limitCountersUsage(db, [budget], soon)).toEqual([95n]);
  });

  test("a reservation is held against the merchant's running prepaid balance", async () => {
    const wallet = `0x${randomBytes(20).toString('hex')}`;
    const { id: merchantId } = await db
      .insertInto('merchants')
      .values({ wallet_address: wallet, payout_address: wallet })
      .returning('id')
      .executeTakeFirstOrThrow();
    const reserved = counter('prepaid');
    const reserve = (amount: bigint) =>
      consumeSponsorshipLimits(
        db,
        [{ counter: reserved, amount, limit: 0n, basis: 'reservation' }],
        terms({ merchantId }),
      );
    expect(await reserve(1n)).toBe(0);
    await creditPrepaidBalance(db, { merchantId, amountUsd: '1.5', description: 'top-up' });
    expect(await reserve(1_000_000n)).toBeUndefined();
    expect(await reserve(500_001n)).toBe(0);
    expect(await reserve(500_000n)).toBeUndefined();
  });

  test('100 concurrent operations against a budget of 37 units: exactly 37 hold, the rest take nothing', async () => {
    const [budget, perSender] = [counter('budget'), counter('sender')];
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, () =>
        consumeSponsorshipLimits(
          db,
          [
            { counter: budget, amount: 3n, limit: 111n, basis: 'cost' },
            { counter: perSender, amount: 1n, limit: 1_000n, basis: 'ops' },
          ],
          terms(),
        ),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === undefined)).toHaveLength(37);
    expect(outcomes.filter((outcome) => outcome === 0)).toHaveLength(63);
    expect(await usage(budget, perSender)).toEqual([111n, 37n]);
  });
});

describe('limitCountersUsage read together', () => {
  test('reads made at once go to Postgres as one statement; each answers its own counters as of its own now, as a read alone does', async () => {
    const [budget, ops, untouched] = [counter('budget'), counter('ops'), counter('untouched')];
    const soon = new Date(NOW.getTime() + 1_000);
    // 30 held until +1 s, 40 until +600 s; one operation counted.
    for (const expiresAt of [soon, new Date(NOW.getTime() + 600_000)])
      expect(
        await consumeSponsorshipLimits(
          db,
          [{ counter: budget, amount: expiresAt === soon ? 30n : 40n, limit: 1_000n, basis: 'cost' }],
          terms({ expiresAt }),
        ),
      ).toBeUndefined();
    expect(
      await consumeSponsorshipLimits(db, [{ counter: ops, amount: 1n, limit: 5n, basis: 'ops' }], terms()),
    ).toBeUndefined();

    const reads: [LimitCounter[], Date][] = [
      [[budget], NOW],
      [[budget, ops], soon],
      [[untouched], NOW],
      [[ops, untouched, budget], soon],
    ];
    const alone = [];
    for (const [counters, at] of reads) alone.push(await limitCountersUsage(db, counters, at));
    expect(alone).toEqual([[70n], [40n, 1n], [0n], [1n, 0n, 40n]]);

    const before = counterReadStats(db) ?? { batches: 0, batchedItems: 0, retried: 0, split: 0 };
    const together = await Promise.all(reads.map(([counters, at]) => limitCountersUsage(db, counters, at)));
    expect(together).toEqual(alone);
    const after = counterReadStats(db)!;
    expect(after.batches).toBe(before.batches + 1);
    expect(after.batchedItems).toBe(before.batchedItems + reads.length);
  });

  test('inside a transaction a read runs on its connection, with what the transaction has written', async () => {
    const budget = counter('budget');
    const seen = await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO paymaster_limit_counters (counter_key, window_start, used, held, expired_until)
        VALUES (${budget.key}, ${WINDOW.toISOString()}::timestamptz, 12, 0, ${NOW.toISOString()}::timestamptz)`.execute(
        trx,
      );
      return limitCountersUsage(trx, [budget], NOW);
    });
    expect(seen).toEqual([12n]);
  });
});
