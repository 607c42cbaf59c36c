import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * `kill <supervisor pid>` must stop the dev stack in order: with `callerHandlesSignals`, a SIGTERM
 * reaches only the caller's handler, and Postgres still answers until the caller stops it.
 */
describe('embedded PostgreSQL and SIGTERM', () => {
  it('with callerHandlesSignals, Postgres keeps answering after a SIGTERM until the caller stops it', async () => {
    const script = `
      const { mkdtempSync, chmodSync } = require('node:fs');
      const { join } = require('node:path');
      const { tmpdir } = require('node:os');
      const { Client } = require('pg');
      const { startEmbeddedPostgres } = require('./dev/services/postgres.ts');
      (async () => {
        const dir = mkdtempSync(join(tmpdir(), 'pg-signals-'));
        chmodSync(dir, 0o777);
        const server = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), persistent: false, callerHandlesSignals: true });
        process.once('SIGTERM', async () => {
          await new Promise((r) => setTimeout(r, 1000));
          const client = new Client({ connectionString: server.adminUrl });
          try {
            await client.connect();
            const { rows } = await client.query('select 1 as one');
            await client.end();
            process.stdout.write('answered ' + rows[0].one + '\\n');
          } catch (error) {
            process.stdout.write('refused ' + error.message + '\\n');
          }
          await server.stop();
          process.exit(0);
        });
        process.stdout.write('ready\\n');
      })().catch((error) => { process.stdout.write('failed ' + error.message + '\\n'); process.exit(2); });
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: resolve(__dirname, '..', '..'),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready\n') && !child.killed) child.kill('SIGTERM');
    });
    const code = await new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
    expect(output).toContain('answered 1');
    expect(code).toBe(0);
  }, 120_000);
});
