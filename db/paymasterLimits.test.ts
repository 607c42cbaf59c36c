import { randomBytes } from 'node:crypto';
import { testStack } from '../test/harness/stack';
import { createDb, type Db } from './client';
import { consumeLimitCounters, limitCounterUsage, type LimitCounter } from './paymasterLimits';

/** consume_paymaster_limit_counters: every counter or none, and never past a limit under concurrency. */

let db: Db;
beforeAll(() => {
  db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 10 });
});
afterAll(() => db.destroy());

const WINDOW = new Date('2026-11-22T10:00:00.000Z');
const counter = (name: string): LimitCounter => ({
  key: `test:${name}:${randomBytes(6).toString('hex')}`,
  windowStart: WINDOW,
});

describe('consumeLimitCounters', () => {
  test('consumes every counter when all fit, and nothing when a later one refuses', async () => {
    const [budget, senderUsd, senderOps] = [counter('budget'), counter('usd'), counter('ops')];
    const operation = (ops: bigint) => [
      { counter: budget, amount: 700n, limit: 10_000n },
      { counter: senderUsd, amount: 800n, limit: 10_000n },
      { counter: senderOps, amount: 1n, limit: ops },
    ];
    expect(await consumeLimitCounters(db, operation(2n))).toBeUndefined();
    expect(await consumeLimitCounters(db, operation(2n))).toBeUndefined();
    // The third operation breaks the ops limit (index 2): the two counters before it keep their totals.
    expect(await consumeLimitCounters(db, operation(2n))).toBe(2);
    expect(await limitCounterUsage(db, budget)).toBe(1400n);
    expect(await limitCounterUsage(db, senderUsd)).toBe(1600n);
    expect(await limitCounterUsage(db, senderOps)).toBe(2n);
  });

  test('refuses a first amount larger than its limit without creating the counter', async () => {
    const fresh = counter('fresh');
    expect(await consumeLimitCounters(db, [{ counter: fresh, amount: 11n, limit: 10n }])).toBe(0);
    expect(await limitCounterUsage(db, fresh)).toBe(0n);
    expect(await consumeLimitCounters(db, [{ counter: fresh, amount: 10n, limit: 10n }])).toBeUndefined();
    expect(await limitCounterUsage(db, fresh)).toBe(10n);
  });

  test('nothing to consume is consumed', async () => {
    expect(await consumeLimitCounters(db, [])).toBeUndefined();
  });

  test('100 concurrent operations against a budget of 37 units: exactly 37 consume, the rest take nothing', async () => {
    const [budget, perSender] = [counter('budget'), counter('sender')];
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, () =>
        consumeLimitCounters(db, [
          { counter: budget, amount: 3n, limit: 111n },
          { counter: perSender, amount: 1n, limit: 1_000n },
        ]),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === undefined)).toHaveLength(37);
    expect(outcomes.filter((outcome) => outcome === 0)).toHaveLength(63);
    expect(await limitCounterUsage(db, budget)).toBe(111n);
    expect(await limitCounterUsage(db, perSender)).toBe(37n);
  });
});
