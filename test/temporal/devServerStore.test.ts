import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startTemporalDevServer, TemporalDevServerError } from '../../dev/services/temporal';

// The benches' file-backed dev server (bench/lib/services.ts `temporalStore: 'file'`): its store must be the
// file, with the pragmas given, and its pid the server's own (the subscriptions bench reads its memory).
describe('the Temporal dev server with a SQLite file store', () => {
  let workDir: string;
  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'stablepay-temporal-store-'));
  });
  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('keeps its workflows in the file, in write-ahead-log mode when asked, and reports its own pid', async () => {
    const dbFile = join(workDir, 'temporal.sqlite');
    const server = await startTemporalDevServer({
      silent: true,
      dbFile,
      sqlitePragmas: { journal_mode: 'wal', synchronous: 'off' },
    });
    try {
      expect(readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0')).toEqual(
        expect.arrayContaining(['start-dev', '--db-filename', dbFile, '--sqlite-pragma', 'journal_mode=wal']),
      );
      const connection = await Connection.connect({ address: server.address });
      try {
        const client = new Client({ connection, namespace: server.namespace });
        // No worker polls this queue: the workflow only has to be stored.
        await client.workflow.start('notRunAnywhere', { workflowId: 'stored-in-file', taskQueue: 'nobody' });
      } finally {
        await connection.close();
      }
      // A rollback-journal store (SQLite's default) has no -wal file beside it.
      expect(existsSync(`${dbFile}-wal`)).toBe(true);
    } finally {
      await server.stop();
    }

    // The same file, served again: the workflow is still there.
    const again = await startTemporalDevServer({ silent: true, dbFile });
    try {
      const connection = await Connection.connect({ address: again.address });
      try {
        const client = new Client({ connection, namespace: again.namespace });
        const { status } = await client.workflow.getHandle('stored-in-file').describe();
        expect(status.name).toBe('RUNNING');
      } finally {
        await connection.close();
      }
    } finally {
      await again.stop();
    }
  });

  it('refuses SQLite pragmas without a file (the in-memory store takes none)', async () => {
    await expect(
      startTemporalDevServer({ silent: true, sqlitePragmas: { synchronous: 'off' } }),
    ).rejects.toThrow(TemporalDevServerError);
  });
});
