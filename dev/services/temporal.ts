import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import {
  SEARCH_ATTRIBUTES,
  searchAttributeCliArgs,
  unregisteredSearchAttributes,
} from '../../workflows/searchAttributes';
import { ensureTemporalInstalled } from '../installTemporal';
import { killOnExit } from './killOnExit';
import { findFreePort } from './freePort';

/**
 * The embedded Temporal of the dev stack and the tests (docs/architecture.md "Processes"): the CLI's dev server with its
 * Web UI, and the time-skipping test server for workflows that wait for hours.
 */

export interface StartTemporalDevServerOptions {
  /** SQLite file that keeps workflows across restarts; in-memory when omitted. */
  dbFile?: string;
  /**
   * SQLite pragmas for the file store (`--sqlite-pragma NAME=VALUE`), e.g. `{ journal_mode: 'wal',
   * synchronous: 'off' }` for a throwaway store that a benchmark fills faster; only with `dbFile`.
   */
  sqlitePragmas?: Record<string, string>;
  /** Do not forward the server's own output (warnings and errors) to this process's stderr. */
  silent?: boolean;
  /** Where the server's warnings and errors go instead of this process's stderr (the dev stack's log file). */
  stderr?: (chunk: Buffer) => void;
  /** Namespace to create at launch besides `default`. */
  namespace?: string;
  /** How long to wait for the frontend, the Web UI and the search attributes; 30 s by default. */
  readyTimeoutMs?: number;
  /** Fixed frontend and UI ports (to restart a server where its clients expect it); free ports otherwise. */
  port?: number;
  uiPort?: number;
}

export interface TemporalDevServer {
  /** Frontend gRPC `host:port`. */
  address: string;
  /** The server's process (the CLI runs the whole server in it): for its resident memory. */
  pid: number;
  /** The Web UI, e.g. `http://127.0.0.1:8233`. */
  uiUrl: string;
  namespace: string;
  /** Resolves once the server process exits, stopped or not: `was killed by SIGKILL`, `exited with code 1`. */
  exited: Promise<string>;
  /** Terminates the server and resolves once the process has exited. */
  stop(): Promise<void>;
}

export class TemporalDevServerError extends Error {
  override name = 'TemporalDevServerError';
}

const maxOutputChars = 64 * 1024;
const portCollisionAttempts = 3;

/**
 * Starts `temporal server start-dev` on free ports of 127.0.0.1 with our search attributes
 * registered; resolves when the frontend answers, the Web UI serves and the attributes are
 * visible in the namespace. Rejects with the server's output when it does not get there.
 */
export async function startTemporalDevServer({
  dbFile,
  sqlitePragmas = {},
  silent = false,
  stderr,
  namespace = 'default',
  readyTimeoutMs = 30_000,
  port: fixedPort,
  uiPort: fixedUiPort,
}: StartTemporalDevServerOptions = {}): Promise<TemporalDevServer> {
  const { cli } = await ensureTemporalInstalled();
  const dbPath = dbFile === undefined ? undefined : resolve(dbFile);
  if (dbPath === undefined && Object.keys(sqlitePragmas).length > 0)
    throw new TemporalDevServerError('SQLite pragmas apply to a file store only: give dbFile too');
  if (dbPath !== undefined) await mkdir(dirname(dbPath), { recursive: true });

  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? (await findFreePort());
    let uiPort = fixedUiPort ?? (await findFreePort());
    while (uiPort === port) uiPort = await findFreePort();
    const args = [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--ui-port',
      String(uiPort),
      '--log-level',
      'warn',
      '--color',
      'never',
      ...(namespace === 'default' ? [] : ['--namespace', namespace]),
      ...(dbPath === undefined ? [] : ['--db-filename', dbPath]),
      ...Object.entries(sqlitePragmas).flatMap(([name, value]) => ['--sqlite-pragma', `${name}=${value}`]),
      ...searchAttributeCliArgs(),
    ];
    const server = spawnServer(cli, args, silent, stderr);
    const address = `127.0.0.1:${port}`;
    const uiUrl = `http://127.0.0.1:${uiPort}`;
    try {
      await waitUntilReady({ server, address, uiUrl, namespace, deadline: Date.now() + readyTimeoutMs });
      return { address, pid: server.pid, uiUrl, namespace, exited: server.exitInfo, stop: server.stop };
    } catch (error) {
      await server.stop();
      const portTaken = /address already in use/i.test(server.output());
      if (portTaken && attempt < portCollisionAttempts && fixedPort === undefined) continue;
      throw error;
    }
  }
}

interface ServerProcess {
  pid: number;
  /** Rejects (never resolves) when the process exits. */
  exited: Promise<never>;
  /** Resolves with how the process exited. */
  exitInfo: Promise<string>;
  hasExited(): boolean;
  output(): string;
  stop(): Promise<void>;
}

function spawnServer(
  cli: string,
  args: string[],
  silent: boolean,
  stderr: (chunk: Buffer) => void = (chunk) => process.stderr.write(chunk),
): ServerProcess {
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // stdout carries only the start banner (with `localhost` addresses); stderr carries warnings and errors.
  let forwardStderr = !silent;
  const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-maxOutputChars);
    if (stream === 'stderr' && forwardStderr) stderr(chunk);
  };
  child.stdout?.on('data', collect('stdout'));
  child.stderr?.on('data', collect('stderr'));

  // A dev process that dies without calling stop() must not leave the server behind.
  const forget = killOnExit(child, 'SIGKILL');

  let exitedFlag = false;
  const exitInfo = new Promise<string>((resolveExit) => {
    child.once('error', (error) => {
      exitedFlag = true;
      resolveExit(`could not be spawned: ${error.message}`);
    });
    child.once('exit', (code, signal) => {
      exitedFlag = true;
      forget();
      resolveExit(signal === null ? `exited with code ${code}` : `was killed by ${signal}`);
    });
  });
  const exited = exitInfo.then((how) => {
    throw new TemporalDevServerError(`temporal server start-dev ${how}:\n${output.trim() || '(no output)'}`);
  });
  exited.catch(() => undefined);

  return {
    pid: child.pid ?? -1,
    exited,
    exitInfo,
    hasExited: () => exitedFlag,
    output: () => output,
    stop: async () => {
      if (exitedFlag) return;
      forwardStderr = false; // its internal workers warn about the closing frontend while it stops
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exitInfo;
      clearTimeout(forced);
    },
  };
}

async function waitUntilReady({
  server,
  address,
  uiUrl,
  namespace,
  deadline,
}: {
  server: ServerProcess;
  address: string;
  uiUrl: string;
  namespace: string;
  deadline: number;
}): Promise<void> {
  let lastProblem = 'not probed yet';
  while (!server.hasExited()) {
    if (Date.now() > deadline) {
      throw new TemporalDevServerError(
        `temporal server start-dev at ${address} was not ready in time (${lastProblem}):\n${server.output().trim() || '(no output)'}`,
      );
    }
    try {
      const probe = await Promise.race([server.exited, probeReadiness(address, uiUrl, namespace)]);
      if (probe === undefined) return;
      lastProblem = probe;
    } catch (error) {
      if (server.hasExited()) break;
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    await delay(200);
  }
  return server.exited;
}

/** Undefined when ready, else what is still missing. */
async function probeReadiness(
  address: string,
  uiUrl: string,
  namespace: string,
): Promise<string | undefined> {
  const connection = await Connection.connect({ address, connectTimeout: 2_000 });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = unregisteredSearchAttributes(customAttributes);
    if (missing.length > 0)
      return `search attributes not registered yet: ${missing.map(({ name }) => name).join(', ')}`;
  } finally {
    await connection.close();
  }
  const ui = await fetch(uiUrl, { signal: AbortSignal.timeout(2_000) });
  if (!ui.ok) return `Web UI answered ${ui.status}`;
  return undefined;
}

/**
 * A time-skipping test environment on the pinned, project-local test server (no download):
 * awaiting a workflow result fast-forwards its timers. Our search attributes are registered, since
 * the session workflows upsert them.
 */
export async function startTimeSkippingTestEnvironment(): Promise<TestWorkflowEnvironment> {
  const { testServer } = await ensureTemporalInstalled();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: testServer } },
  });
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      SEARCH_ATTRIBUTES.map(({ name, type }) => [name, encodeSearchAttributeIndexedValueType(type)!]),
    ),
  });
  return env;
}
