import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { dropDatabase, ensureDatabase } from '../dev/services/postgres';
import { testStack } from '../test/harness/stack';
import { createDb } from './client';
import { migrateToLatest } from './migrate';
import { migrations } from './migrations';

describe('migrations', () => {
  const name = `stablepay_migrate_${randomBytes(4).toString('hex')}`;
  afterAll(() => dropDatabase(testStack().adminDatabaseUrl, name));

  it('bring an empty database to the latest schema, and a second run is a no-op', async () => {
    const db = createDb({ connectionString: await ensureDatabase(testStack().adminDatabaseUrl, name) });
    try {
      const first = await migrateToLatest(db);
      expect(first.map((result) => [result.migrationName, result.status])).toEqual(
        Object.keys(migrations).map((migrationName) => [migrationName, 'Success']),
      );

      const tables = await sql<{ table_name: string }>`
        SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`.execute(
        db,
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual(
        expect.arrayContaining(['merchants', 'api_keys', 'login_nonces', 'smart_accounts']),
      );

      expect(await migrateToLatest(db)).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});
