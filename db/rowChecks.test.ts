import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { testStack } from '../test/harness/stack';
import { createDb, type Db } from './client';
import { PAYMASTER_USAGE_STATUSES } from './paymasterUsageStatus';

/**
 * The CHECK constraints of the rows every signed answer writes, as functions since migration
 * 2026_12_02_0100 (docs/decisions.md "CHECK constraints on the paymaster's hot rows as functions"): the
 * same rows pass and the same rows are refused, by the constraint's name.
 */
let db: Db;
let merchantId: string;

beforeAll(async () => {
  db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 2 });
  const wallet = `0x${randomBytes(20).toString('hex')}`;
  const { rows } = await sql<{ id: string }>`
    INSERT INTO merchants (wallet_address, payout_address) VALUES (${wallet}, ${wallet}) RETURNING id`.execute(
    db,
  );
  merchantId = rows[0]!.id;
});
afterAll(async () => {
  await db?.destroy();
});

/** The constraint a statement broke, or undefined when it ran. */
async function brokenConstraint(statement: Promise<unknown>): Promise<string | undefined> {
  try {
    await statement;
    return undefined;
  } catch (error) {
    const { code, constraint } = error as { code?: string; constraint?: string };
    if (code !== '23514') throw error;
    return constraint;
  }
}

const insertUsage = (status: string, mode: string | null = 'sponsored') =>
  sql`INSERT INTO paymaster_usage (merchant_id, client_id, status, mode)
      VALUES (${merchantId}, ${`pm_${randomBytes(4).toString('hex')}`}, ${status}, ${mode})`.execute(db);

test('a usage row takes every status of the list and refuses any other, by paymaster_usage_status_check', async () => {
  for (const status of PAYMASTER_USAGE_STATUSES)
    expect(await brokenConstraint(insertUsage(status))).toBeUndefined();
  const { rows } = await sql<{ count: number }>`
    SELECT count(DISTINCT status)::integer AS count FROM paymaster_usage WHERE merchant_id = ${merchantId}`.execute(
    db,
  );
  expect(rows[0]!.count).toBe(PAYMASTER_USAGE_STATUSES.length);
  for (const status of ['approved', 'Submitted', 'submitted ', ''])
    expect(await brokenConstraint(insertUsage(status))).toBe('paymaster_usage_status_check');
  expect(await brokenConstraint(insertUsage('submitted', 'free'))).toBe('paymaster_usage_mode_check');
});

test('a hold row needs one entry per held consumption in every array, amounts never negative and known bases, by paymaster_operation_holds_terms_check', async () => {
  const window = new Date('2026-12-02T00:00:00.000Z').toISOString();
  const insertHold = (terms: {
    positions: number[];
    keys: string[];
    windows: string[];
    amounts: string[];
    bases: string[];
  }) =>
    sql`INSERT INTO paymaster_operation_holds
          (hold_id, positions, counter_keys, window_starts, amounts, bases, expires_at)
        VALUES (${randomUUID()}, ${terms.positions}::integer[], ${terms.keys}::text[],
          ${terms.windows}::timestamptz[], ${terms.amounts}::bigint[], ${terms.bases}::text[], now() + interval '1 hour')`.execute(
      db,
    );
  const valid = {
    positions: [1, 2, 3],
    keys: ['budget:a', 'sender_usd:b', 'prepaid:c'],
    windows: [window, window, window],
    amounts: ['0', '250', '1000'],
    bases: ['cost', 'charged', 'reservation'],
  };
  expect(await brokenConstraint(insertHold(valid))).toBeUndefined();
  const refused = [
    { ...valid, positions: [], keys: [], windows: [], amounts: [], bases: [] },
    { ...valid, positions: [1, 2] },
    { ...valid, keys: ['budget:a'] },
    { ...valid, windows: [window, window] },
    { ...valid, amounts: ['1', '2', '3', '4'] },
    { ...valid, bases: ['cost', 'charged'] },
    { ...valid, amounts: ['0', '-1', '1000'] },
    { ...valid, bases: ['cost', 'ops', 'reservation'] },
  ];
  for (const terms of refused)
    expect(await brokenConstraint(insertHold(terms))).toBe('paymaster_operation_holds_terms_check');
});
