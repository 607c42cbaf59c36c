import { sql } from 'kysely';
import { createDb, type Db } from './client';
import { testStack } from '../test/harness/stack';

/**
 * A server that ends a connection ("terminating connection due to administrator command": a stopping
 * or restarting Postgres) must never crash the process, whether the connection was idle in the pool or
 * checked out in the middle of a transaction.
 */
describe('database connections the server terminates', () => {
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  beforeAll(() => process.on('uncaughtException', onUncaught));
  afterAll(() => process.off('uncaughtException', onUncaught));

  const terminate = async (pid: number) => {
    const admin = createDb({ connectionString: testStack().databaseUrl, maxConnections: 1 });
    try {
      await sql`SELECT pg_terminate_backend(${pid})`.execute(admin);
    } finally {
      await admin.destroy();
    }
  };
  const backendPid = async (db: Db) =>
    (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0]!.pid;

  async function waitFor(condition: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('a connection terminated while checked out between the statements of a transaction is reported, and the transaction fails; the pool serves the next query', async () => {
    const reported: Error[] = [];
    const db = createDb({
      connectionString: testStack().databaseUrl,
      maxConnections: 2,
      onIdleError: (error) => reported.push(error),
    });
    try {
      const transaction = db.transaction().execute(async (trx) => {
        await terminate(await backendPid(trx));
        await waitFor(() => reported.length > 0, 'the connection error');
        await sql`SELECT 1`.execute(trx);
      });
      await expect(transaction).rejects.toThrow();
      expect(reported[0]!.message).toContain('terminating connection due to administrator command');
      expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows).toEqual([{ one: 1 }]);
      expect(uncaught).toEqual([]);
    } finally {
      await db.destroy();
    }
  });

  it('a connection terminated while idle in the pool is reported once', async () => {
    const reported: Error[] = [];
    const db = createDb({
      connectionString: testStack().databaseUrl,
      maxConnections: 1,
      onIdleError: (error) => reported.push(error),
    });
    try {
      const pid = await backendPid(db);
      await terminate(pid);
      await waitFor(() => reported.length > 0, 'the connection error');
      expect(reported.map((error) => error.message)).toEqual([
        expect.stringContaining('terminating connection due to administrator command'),
      ]);
      expect(await backendPid(db)).not.toBe(pid);
      expect(uncaught).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});
