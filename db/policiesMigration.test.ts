import { randomBytes } from 'node:crypto';
import { Migrator, sql } from 'kysely';
import { dropDatabase, ensureDatabase } from '../dev/services/postgres';
import { testStack } from '../test/harness/stack';
import { createDb, type Db } from './client';
import { migrations } from './migrations';
import { listSponsorshipPolicies } from './paymasterSponsorshipPolicies';

/**
 * Migration 1200 (paymaster policies II) gives every existing client one policy, first, that says what
 * the client said before: every chain the client allows, the merchant's shared allowlist, no window and
 * no budget of its own (the merchant's limits keep applying to every policy). Clients created later
 * get the same default policy from the trigger.
 */

const POLICIES = '2026_11_28_1200_paymaster_policies';
const name = `stablepay_policies_${randomBytes(4).toString('hex')}`;
let db: Db;
let migrator: Migrator;

beforeAll(async () => {
  db = createDb({ connectionString: await ensureDatabase(testStack().adminDatabaseUrl, name) });
  migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const before = Object.keys(migrations).filter((migration) => migration < POLICIES);
  const { error } = await migrator.migrateTo(before[before.length - 1]!);
  if (error) throw error;
});
afterAll(async () => {
  await db.destroy();
  await dropDatabase(testStack().adminDatabaseUrl, name);
});

const insertClient = async (merchantId: string, chains: number[], revoked = false) => {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO paymaster_clients (merchant_id, client_id, environment, label, allowed_chain_ids, gas_mode, revoked_at)
    VALUES (${merchantId}::uuid, ${`pmc_test_${randomBytes(16).toString('hex')}`}, 'test', 'app',
      ${chains}::integer[], 'sponsored', ${revoked ? new Date().toISOString() : null}::timestamptz)
    RETURNING id`.execute(db);
  return rows[0]!.id;
};

test('migration 1200 gives each existing client its default policy, and new clients get one too', async () => {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO merchants (wallet_address, payout_address)
    VALUES (${`0x${randomBytes(20).toString('hex')}`}, ${`0x${randomBytes(20).toString('hex')}`})
    RETURNING id`.execute(db);
  const merchantId = rows[0]!.id;
  const clients = [
    await insertClient(merchantId, [84532]),
    await insertClient(merchantId, [84532, 421614], true),
  ];

  const { error } = await migrator.migrateTo(POLICIES);
  if (error) throw error;

  for (const clientId of clients) {
    expect(await listSponsorshipPolicies(db, clientId)).toEqual([
      expect.objectContaining({
        merchant_id: merchantId,
        client_id: clientId,
        name: 'Default policy',
        position: 0,
        chain_ids: null,
        allowlist: null,
        starts_at: null,
        ends_at: null,
        budgets: [],
        approval_webhook: null,
      }),
    ]);
  }
  const later = await insertClient(merchantId, [11155111]);
  expect(await listSponsorshipPolicies(db, later)).toEqual([
    expect.objectContaining({ client_id: later, name: 'Default policy', position: 0, chain_ids: null }),
  ]);
});
