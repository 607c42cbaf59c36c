import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Client } from 'pg';
import { testStack } from '../test/harness/stack';
import { createDb, type Db } from './client';
import { upsertMerchantByWallet } from './merchants';
import {
  type CounterConsumption,
  type HoldTerms,
  type LimitCounter,
  limitCountersUsage,
} from './paymasterLimits';
import {
  batchValues,
  type NewSignedUsageRecord,
  RECORD_SIGNED_OPERATIONS,
  recordSignedOperation,
  type SignedOperationRecording,
  signedRecordingStats,
  signedRecordingValues,
} from './paymasterUsage';

/**
 * Group commit of signed answers (issue 46, migration 2026_11_30_0100): recordings submitted together on
 * one pool go to Postgres as one statement and one transaction, each item checked against its limits as
 * the single statement checks it. Calls made in the same turn of the event loop are one batch.
 */

let db: Db;
let merchantId: string;
beforeAll(async () => {
  db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 4 });
  const hex = randomBytes(20).toString('hex');
  merchantId = (await upsertMerchantByWallet(db, { walletAddress: `0x${hex}`, payoutAddress: `0x${hex}` }))
    .id;
});
afterAll(() => db.destroy());

const NOW = new Date('2031-03-01T10:30:00.000Z');
const counter = (name: string): LimitCounter => ({
  key: `test:${name}:${randomBytes(6).toString('hex')}`,
  windowStart: new Date('2031-03-01T10:00:00.000Z'),
});
const hold = (): HoldTerms => ({
  holdId: randomUUID(),
  expiresAt: new Date(NOW.getTime() + 600_000),
  now: NOW,
  merchantId,
});
const hex32 = () => `0x${randomBytes(32).toString('hex')}` as const;

/** A signed operation's row; `clientId` marks the test's rows. */
function signedRow(clientId: string, overrides: Partial<NewSignedUsageRecord> = {}): NewSignedUsageRecord {
  return {
    merchantId,
    clientId,
    method: 'pm_getPaymasterData',
    chainId: 84532,
    mode: 'sponsored',
    status: 'submitted',
    reason: null,
    sender: `0x${randomBytes(20).toString('hex')}`,
    entryPoint: '0x4337084d9e255ff0702461cf8895ce9e3b5ff108',
    userOpHash: hex32(),
    targets: [],
    validUntil: new Date(NOW.getTime() + 600_000),
    requestFingerprint: randomBytes(32).toString('hex'),
    signedResult: {
      paymaster: '0x1000000000000000000000000000000000000001',
      paymasterData: hex32(),
      paymasterVerificationGasLimit: '0x1',
      paymasterPostOpGasLimit: '0x2',
    },
    ...overrides,
  };
}

const rowsOf = async (clientId: string) =>
  db.selectFrom('paymaster_usage').select(['user_op_hash']).where('client_id', '=', clientId).execute();

/** The hold rows of `holdIds` that exist, by hold id. */
const holdRows = async (holdIds: string[]) =>
  (
    await sql<{ hold_id: string; counter_keys: string[]; amounts: string[] }>`
      SELECT hold_id, counter_keys, amounts FROM paymaster_operation_holds
      WHERE hold_id = ANY(${holdIds}::uuid[]) ORDER BY hold_id`.execute(db)
  ).rows;

/** `ms` after NOW. */
const at = (ms: number) => new Date(NOW.getTime() + ms);
/** A hold's terms: asked at NOW + `now` ms, held until NOW + `expires` ms. */
const terms = (now: number, expires: number): HoldTerms => ({
  holdId: randomUUID(),
  now: at(now),
  expiresAt: at(expires),
  merchantId,
});
/** An operation's consumption of `amount` from a fresh dollar counter whose limit is `limit`. */
const dollarsUpTo = (limit: bigint) => {
  const dollars = counter('usd');
  const taking = (amount: bigint): CounterConsumption[] => [
    { counter: dollars, amount, limit, basis: 'charged' },
  ];
  return Object.assign(taking, { counter: dollars });
};

const stats = () => signedRecordingStats(db) ?? { batches: 0, batchedItems: 0, retried: 0, split: 0 };

describe('record_signed_paymaster_operations: a batch of signed answers in one transaction', () => {
  test('12 recordings at once against an operations limit of 5: one batch, exactly 5 recorded, 7 refused at that limit', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const [dollars, ops] = [counter('usd'), counter('ops')];
    const consumptions: CounterConsumption[] = [
      { counter: dollars, amount: 100n, limit: 1_000_000n, basis: 'charged' },
      { counter: ops, amount: 1n, limit: 5n, basis: 'ops' },
    ];
    const before = stats();
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () => recordSignedOperation(db, consumptions, hold(), signedRow(clientId))),
    );
    expect(stats().batches).toBe(before.batches + 1);
    expect(stats().batchedItems).toBe(before.batchedItems + 12);
    expect(outcomes.filter((outcome) => outcome.kind === 'recorded')).toHaveLength(5);
    expect(outcomes.filter((outcome) => outcome.kind === 'denied')).toEqual(
      Array.from({ length: 7 }, () => ({ kind: 'denied', deniedAt: 1 })),
    );
    // The batch's order is the callers': the first five took the limit.
    expect(outcomes.slice(0, 5).every((outcome) => outcome.kind === 'recorded')).toBe(true);
    expect(await rowsOf(clientId)).toHaveLength(5);
    // A refused operation took nothing, its dollar step before the refusal included.
    expect(await limitCountersUsage(db, [dollars, ops], NOW)).toEqual([500n, 5n]);
  });

  test('a refused item does not fail its neighbours: alternating refused and recorded items in one batch', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const [full, open] = [counter('full'), counter('open')];
    const refusedOne: CounterConsumption[] = [{ counter: full, amount: 1n, limit: 0n, basis: 'ops' }];
    const takenOne: CounterConsumption[] = [{ counter: open, amount: 7n, limit: 1_000n, basis: 'cost' }];
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        recordSignedOperation(db, index % 2 === 0 ? refusedOne : takenOne, hold(), signedRow(clientId)),
      ),
    );
    expect(outcomes.map((outcome) => outcome.kind)).toEqual([
      'denied',
      'recorded',
      'denied',
      'recorded',
      'denied',
      'recorded',
      'denied',
      'recorded',
    ]);
    expect(await rowsOf(clientId)).toHaveLength(4);
    expect(await limitCountersUsage(db, [full, open], NOW)).toEqual([0n, 28n]);
  });

  test('a signing request repeated within one batch is recorded and consumed once; the repeat answers the stored data', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const ops = counter('ops');
    const consumptions: CounterConsumption[] = [{ counter: ops, amount: 1n, limit: 10n, basis: 'ops' }];
    const first = signedRow(clientId);
    const repeat = signedRow(clientId, { requestFingerprint: first.requestFingerprint });
    const outcomes = await Promise.all([
      recordSignedOperation(db, consumptions, hold(), first),
      recordSignedOperation(db, consumptions, hold(), repeat),
      recordSignedOperation(db, consumptions, hold(), signedRow(clientId)),
    ]);
    expect(outcomes).toEqual<SignedOperationRecording[]>([
      { kind: 'recorded' },
      { kind: 'duplicate', stored: first.signedResult },
      { kind: 'recorded' },
    ]);
    expect(await rowsOf(clientId)).toHaveLength(2);
    expect(await limitCountersUsage(db, [ops], NOW)).toEqual([2n]);
  });

  test('a refused item in the middle of a batch leaves no usage row and no hold; its neighbours are recorded with their holds', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const [dollars, ops, full] = [counter('usd'), counter('ops'), counter('full')];
    const allowed: CounterConsumption[] = [
      { counter: dollars, amount: 250n, limit: 1_000_000n, basis: 'charged' },
      { counter: ops, amount: 1n, limit: 10n, basis: 'ops' },
    ];
    // Refused at its last step, after its dollar step was checked against the counter the others take.
    const refused: CounterConsumption[] = [
      ...allowed,
      { counter: full, amount: 1n, limit: 0n, basis: 'ops' },
    ];
    const holds = [hold(), hold(), hold()];
    const rows = [signedRow(clientId), signedRow(clientId), signedRow(clientId)];
    const outcomes = await Promise.all([
      recordSignedOperation(db, allowed, holds[0]!, rows[0]!),
      recordSignedOperation(db, refused, holds[1]!, rows[1]!),
      recordSignedOperation(db, allowed, holds[2]!, rows[2]!),
    ]);
    expect(outcomes).toEqual<SignedOperationRecording[]>([
      { kind: 'recorded' },
      { kind: 'denied', deniedAt: 2 },
      { kind: 'recorded' },
    ]);
    expect((await rowsOf(clientId)).map((row) => row.user_op_hash).sort()).toEqual(
      [rows[0]!.userOpHash, rows[2]!.userOpHash].sort(),
    );
    expect(await holdRows(holds.map((terms) => terms.holdId))).toEqual(
      [holds[0]!.holdId, holds[2]!.holdId]
        .map((holdId) => ({ hold_id: holdId, counter_keys: [dollars.key], amounts: ['250'] }))
        .sort((a, b) => a.hold_id.localeCompare(b.hold_id)),
    );
    expect(await limitCountersUsage(db, [dollars, ops, full], NOW)).toEqual([500n, 2n, 0n]);
  });

  test('a batch item whose userOpHash another transaction is inserting waits for it: committed, the item answers its stored data and takes nothing; rolled back, the item is recorded', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const [dollars, ops] = [counter('usd'), counter('ops')];
    const consumptions: CounterConsumption[] = [
      { counter: dollars, amount: 100n, limit: 1_000_000n, basis: 'charged' },
      { counter: ops, amount: 1n, limit: 10n, basis: 'ops' },
    ];
    const other = new Client({ connectionString: testStack().databaseUrl });
    await other.connect();
    try {
      for (const ending of ['COMMIT', 'ROLLBACK'] as const) {
        const elsewhere = signedRow(clientId);
        await other.query('BEGIN');
        await other.query(
          `INSERT INTO paymaster_usage (merchant_id, client_id, method, chain_id, mode, status, sender, entry_point,
             user_op_hash, request_fingerprint, signed_result)
           VALUES ($1, $2, 'pm_getPaymasterData', $3, 'sponsored', 'submitted', $4, $5, $6, $7, $8)`,
          [
            merchantId,
            `${clientId}_elsewhere`,
            elsewhere.chainId,
            elsewhere.sender,
            elsewhere.entryPoint,
            elsewhere.userOpHash,
            elsewhere.requestFingerprint,
            JSON.stringify(elsewhere.signedResult),
          ],
        );
        // The same operation asked again here (its own fingerprint), between two others.
        const same = signedRow(clientId, { userOpHash: elsewhere.userOpHash, sender: elsewhere.sender });
        const holds = [hold(), hold(), hold()];
        const recordings = Promise.all([
          recordSignedOperation(db, consumptions, holds[0]!, signedRow(clientId)),
          recordSignedOperation(db, consumptions, holds[1]!, same),
          recordSignedOperation(db, consumptions, holds[2]!, signedRow(clientId)),
        ]);
        for (let waiting = 0; waiting === 0;) {
          const { rows } = await sql<{ waiting: string }>`SELECT count(*) AS waiting FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE '%record_signed_paymaster_operations(%'`.execute(
            db,
          );
          waiting = Number(rows[0]!.waiting);
          if (waiting === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const splitBefore = stats().split;
        await other.query(ending);
        const outcomes = await recordings;
        // Committed, the batch's INSERT skips the item after its neighbours were decided with it counted:
        // the batch is refused whole and each item recorded alone (migration 2026_12_03_0100).
        expect(stats().split - splitBefore).toBe(ending === 'COMMIT' ? 1 : 0);
        const held = (await holdRows(holds.map((terms) => terms.holdId))).map((row) => row.hold_id);
        if (ending === 'COMMIT') {
          expect(outcomes).toEqual<SignedOperationRecording[]>([
            { kind: 'recorded' },
            { kind: 'duplicate', stored: elsewhere.signedResult },
            { kind: 'recorded' },
          ]);
          expect(held).toEqual([holds[0]!.holdId, holds[2]!.holdId].sort());
          expect(await limitCountersUsage(db, [dollars, ops], NOW)).toEqual([200n, 2n]);
        } else {
          expect(outcomes.map((outcome) => outcome.kind)).toEqual(['recorded', 'recorded', 'recorded']);
          expect(held).toEqual(holds.map((terms) => terms.holdId).sort());
          expect(await limitCountersUsage(db, [dollars, ops], NOW)).toEqual([500n, 5n]);
        }
      }
      // Two rounds of two neighbours, the rolled-back round's repeat, and nothing of the committed one's.
      expect(await rowsOf(clientId)).toHaveLength(5);
    } finally {
      await other.end();
    }
  });

  test('a refused item whose userOpHash is already recorded answers the stored data, as a repeat found before the limits', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const [open, full] = [counter('open'), counter('full')];
    const first = signedRow(clientId);
    expect(
      await recordSignedOperation(
        db,
        [{ counter: open, amount: 1n, limit: 10n, basis: 'ops' }],
        hold(),
        first,
      ),
    ).toEqual({ kind: 'recorded' });
    const refusing: CounterConsumption[] = [{ counter: full, amount: 1n, limit: 0n, basis: 'ops' }];
    const outcomes = await Promise.all([
      recordSignedOperation(db, refusing, hold(), signedRow(clientId, { userOpHash: first.userOpHash })),
      recordSignedOperation(db, refusing, hold(), signedRow(clientId)),
    ]);
    expect(outcomes).toEqual<SignedOperationRecording[]>([
      { kind: 'duplicate', stored: first.signedResult },
      { kind: 'denied', deniedAt: 0 },
    ]);
    expect(await rowsOf(clientId)).toHaveLength(1);
    expect(await limitCountersUsage(db, [open, full], NOW)).toEqual([1n, 0n]);
  });

  test('an item whose userOpHash an earlier item of the same batch records (another fingerprint) answers that item’s data and takes nothing', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const ops = counter('ops');
    const consumptions: CounterConsumption[] = [{ counter: ops, amount: 1n, limit: 10n, basis: 'ops' }];
    const first = signedRow(clientId);
    const sameHash = signedRow(clientId, { userOpHash: first.userOpHash });
    const holds = [hold(), hold(), hold()];
    const splitBefore = stats().split;
    const outcomes = await Promise.all([
      recordSignedOperation(db, consumptions, holds[0]!, first),
      recordSignedOperation(db, consumptions, holds[1]!, sameHash),
      recordSignedOperation(db, consumptions, holds[2]!, signedRow(clientId)),
    ]);
    expect(outcomes).toEqual<SignedOperationRecording[]>([
      { kind: 'recorded' },
      { kind: 'duplicate', stored: first.signedResult },
      { kind: 'recorded' },
    ]);
    expect(stats().split).toBe(splitBefore);
    expect(await rowsOf(clientId)).toHaveLength(2);
    expect(await limitCountersUsage(db, [ops], NOW)).toEqual([2n]);
  });

  test('a refused item whose userOpHash an earlier item of the same batch records answers that item’s data', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const [open, full] = [counter('open'), counter('full')];
    const first = signedRow(clientId);
    const outcomes = await Promise.all([
      recordSignedOperation(db, [{ counter: open, amount: 1n, limit: 10n, basis: 'ops' }], hold(), first),
      recordSignedOperation(
        db,
        [{ counter: full, amount: 1n, limit: 0n, basis: 'ops' }],
        hold(),
        signedRow(clientId, { userOpHash: first.userOpHash }),
      ),
    ]);
    expect(outcomes).toEqual<SignedOperationRecording[]>([
      { kind: 'recorded' },
      { kind: 'duplicate', stored: first.signedResult },
    ]);
    expect(await rowsOf(clientId)).toHaveLength(1);
    expect(await limitCountersUsage(db, [open, full], NOW)).toEqual([1n, 0n]);
  });

  test('a hold that expires before a later item of the batch stops counting for it, the batch’s own holds included', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const taking = dollarsUpTo(300n);
    const outcomes = await Promise.all([
      // 200 held until +1.5 s.
      recordSignedOperation(db, taking(200n), terms(1_000, 1_500), signedRow(clientId)),
      // At +2 s that hold has expired too: 250 fits (with it counted, 450 would not).
      recordSignedOperation(db, taking(250n), terms(2_000, 600_000), signedRow(clientId)),
      // 250 held until +600 s: 100 more would make 350.
      recordSignedOperation(db, taking(100n), terms(2_000, 600_000), signedRow(clientId)),
    ]);
    expect(outcomes).toEqual<SignedOperationRecording[]>([
      { kind: 'recorded' },
      { kind: 'recorded' },
      { kind: 'denied', deniedAt: 0 },
    ]);
    expect(await limitCountersUsage(db, [taking.counter], at(2_000))).toEqual([250n]);
    // A committed hold expires too: at +700 s the 250 no longer count, 300 fits.
    expect(
      await recordSignedOperation(db, taking(300n), terms(700_000, 800_000), signedRow(clientId)),
    ).toEqual({
      kind: 'recorded',
    });
    expect(await limitCountersUsage(db, [taking.counter], at(700_000))).toEqual([300n]);
  });

  test('a hold that expired before a later item of a batch, recorded before the batch, stops counting for that item; a live one still counts', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const taking = dollarsUpTo(300n);
    // Committed before the batch: 100 held until +600 s, 150 until +1.5 s.
    expect(await recordSignedOperation(db, taking(100n), terms(0, 600_000), signedRow(clientId))).toEqual({
      kind: 'recorded',
    });
    expect(await recordSignedOperation(db, taking(150n), terms(0, 1_500), signedRow(clientId))).toEqual({
      kind: 'recorded',
    });
    const before = stats();
    const outcomes = await Promise.all([
      // At +1 s both holds count: 250 + 50 = 300 fits.
      recordSignedOperation(db, taking(50n), terms(1_000, 600_000), signedRow(clientId)),
      // At +2 s the 150 has expired: 100 + 50 + 150 = 300 fits (with it counted, 450 would not).
      recordSignedOperation(db, taking(150n), terms(2_000, 600_000), signedRow(clientId)),
      // The hold held until +600 s still counts: 1 more would make 301.
      recordSignedOperation(db, taking(1n), terms(2_000, 600_000), signedRow(clientId)),
    ]);
    expect(stats().batches).toBe(before.batches + 1);
    expect(outcomes).toEqual<SignedOperationRecording[]>([
      { kind: 'recorded' },
      { kind: 'recorded' },
      { kind: 'denied', deniedAt: 0 },
    ]);
    expect(await limitCountersUsage(db, [taking.counter], at(2_000))).toEqual([300n]);
  });

  test('a batch reads the holds that expired since its counters were counted off, never every live hold', async () => {
    // Migration 2026_12_04_0100. Left only a bitmap scan of the expires_at index (the plan Postgres picks
    // when its statistics say the holds table is small), a batch read every hold after its counters'
    // expired_until to find the earliest expiry. Measured in Postgres' buffer accesses, in one transaction
    // that is rolled back: 20,000 live holds (about ten minutes of traffic) change what a batch reads by
    // less than the heap pages they fill.
    const client = new Client({ connectionString: testStack().databaseUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      for (const scan of ['seqscan', 'indexscan', 'indexonlyscan'])
        await client.query(`SET LOCAL enable_${scan} = off`);
      const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
      const blocksReadByBatch = async (): Promise<number> => {
        const dollars = counter('usd');
        const consumptions: CounterConsumption[] = [
          { counter: dollars, amount: 100n, limit: 1_000_000n, basis: 'charged' },
        ];
        const batch = [0, 1].map(() => signedRecordingValues(consumptions, hold(), signedRow(clientId)));
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: Record<string, number> }] }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${RECORD_SIGNED_OPERATIONS.text}`,
          batchValues(batch),
        );
        const plan = rows[0]!['QUERY PLAN'][0].Plan;
        return plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!;
      };
      await blocksReadByBatch(); // the first reads the catalogs and compiles the function
      const alone = await blocksReadByBatch();
      const { rows: filled } = await client.query<{ pages: number }>(`
        WITH inserted AS (
          INSERT INTO paymaster_operation_holds (hold_id, positions, counter_keys, window_starts, amounts, bases, expires_at)
          SELECT gen_random_uuid(), ARRAY[1], ARRAY['test:live_hold'], ARRAY['2031-03-01T10:00:00Z'::timestamptz],
            ARRAY[1::bigint], ARRAY['charged'], '2031-03-01T11:00:00Z'::timestamptz + g * interval '1 ms'
          FROM generate_series(1, 20000) AS g
          RETURNING ctid
        )
        SELECT count(DISTINCT (ctid::text::point)[0])::integer AS pages FROM inserted`);
      const heapPages = filled[0]!.pages;
      const withLiveHolds = await blocksReadByBatch();
      expect(heapPages).toBeGreaterThan(100);
      expect(withLiveHolds - alone).toBeLessThan(heapPages / 4);
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
  });

  test('a batch whose transaction fails answers every caller: each item is sent again on its own, the failing one fails alone', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    const poisoned = `0x${randomBytes(20).toString('hex')}`;
    const ops = counter('ops');
    const consumptions: CounterConsumption[] = [{ counter: ops, amount: 1n, limit: 100n, basis: 'ops' }];
    const trigger = `fail_${randomBytes(4).toString('hex')}`;
    // A row Postgres refuses (here by a trigger, for one sender, then for the whole client).
    await sql
      .raw(
        `CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF NEW.sender = '${poisoned}' OR NEW.reason = 'refuse every row' THEN
             RAISE EXCEPTION USING ERRCODE = 'check_violation', MESSAGE = 'test: row refused';
           END IF;
           RETURN NEW;
         END $$;
         CREATE TRIGGER ${trigger} BEFORE INSERT ON paymaster_usage FOR EACH ROW
           WHEN (NEW.client_id = '${clientId}') EXECUTE FUNCTION ${trigger}();`,
      )
      .execute(db);
    try {
      const before = stats();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 6 }, (_, index) =>
          recordSignedOperation(
            db,
            consumptions,
            hold(),
            signedRow(clientId, index === 2 ? { sender: poisoned } : {}),
          ),
        ),
      );
      expect(stats().split).toBe(before.split + 1);
      expect(outcomes.map((outcome) => outcome.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ message: 'test: row refused' });
      expect(await rowsOf(clientId)).toHaveLength(5);
      expect(await limitCountersUsage(db, [ops], NOW)).toEqual([5n]);

      // Every item fails: every caller gets its error, none waits forever, nothing is taken.
      const failing = await Promise.allSettled(
        Array.from({ length: 5 }, () =>
          recordSignedOperation(
            db,
            consumptions,
            hold(),
            signedRow(clientId, { reason: 'refuse every row' }),
          ),
        ),
      );
      expect(failing.map((outcome) => outcome.status)).toEqual(Array(5).fill('rejected'));
      expect(await rowsOf(clientId)).toHaveLength(5);
      expect(await limitCountersUsage(db, [ops], NOW)).toEqual([5n]);
    } finally {
      await sql.raw(`DROP TRIGGER ${trigger} ON paymaster_usage; DROP FUNCTION ${trigger}();`).execute(db);
    }
  });
  test('a batch that Postgres aborts as a deadlock is sent again whole: every item recorded once', async () => {
    const clientId = `pmc_test_${randomBytes(8).toString('hex')}`;
    // Key order: the batch locks `a` then `b`; the other transaction holds `b`, then asks for `a`.
    const tag = randomBytes(6).toString('hex');
    const a: LimitCounter = { key: `test:${tag}:a`, windowStart: NOW };
    const b: LimitCounter = { key: `test:${tag}:b`, windowStart: NOW };
    await sql`INSERT INTO paymaster_limit_counters (counter_key, window_start, used, held, expired_until)
      VALUES (${a.key}, ${NOW.toISOString()}::timestamptz, 0, 0, ${NOW.toISOString()}::timestamptz),
        (${b.key}, ${NOW.toISOString()}::timestamptz, 0, 0, ${NOW.toISOString()}::timestamptz)`.execute(db);
    const other = new Client({ connectionString: testStack().databaseUrl });
    await other.connect();
    try {
      const lockRow = (key: string) =>
        other.query('SELECT 1 FROM paymaster_limit_counters WHERE counter_key = $1 FOR UPDATE', [key]);
      await other.query('BEGIN');
      await lockRow(b.key);
      const otherPid = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const before = stats();
      const consumptions: CounterConsumption[] = [
        { counter: a, amount: 1n, limit: 10n, basis: 'ops' },
        { counter: b, amount: 1n, limit: 10n, basis: 'ops' },
      ];
      const recordings = Promise.all(
        Array.from({ length: 3 }, () => recordSignedOperation(db, consumptions, hold(), signedRow(clientId))),
      );
      // The batch holds `a` and waits for `b`: now the other transaction asks for `a`, a cycle.
      // Waiting on `other` (it holds only this test's `b`) is the batch, never another test's statement on
      // the shared database. Read outside `other`'s transaction: pg_stat_activity is read once per transaction.
      for (let waiting = 0; waiting === 0;) {
        const { rows } = await sql<{ waiting: string }>`SELECT count(*) AS waiting FROM pg_stat_activity
          WHERE ${otherPid}::integer = ANY(pg_blocking_pids(pid))`.execute(db);
        waiting = Number(rows[0]!.waiting);
        if (waiting === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await lockRow(a.key);
      await other.query('COMMIT');
      expect((await recordings).map((outcome) => outcome.kind)).toEqual(['recorded', 'recorded', 'recorded']);
      expect(stats().retried).toBe(before.retried + 1);
      expect(stats().batches).toBe(before.batches + 1);
      expect(await rowsOf(clientId)).toHaveLength(3);
      expect(await limitCountersUsage(db, [a, b], NOW)).toEqual([3n, 3n]);
    } finally {
      await other.end();
    }
  });
});
