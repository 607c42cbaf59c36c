import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { TestResponse } from './app';

/** How much of a process's output is kept for waitForOutput and failure messages. */
const OUTPUT_KEPT_CHARS = 4_000_000;

/** A project process (`api/main.ts`, `workers/main.ts`) run as an orchestrator would: started, killed, started again. */
export class ProjectProcess {
  child?: ChildProcess;
  output = '';
  constructor(
    private readonly entry: string,
    private readonly env: Record<string, string>,
  ) {}

  start(): void {
    this.output = '';
    this.child = spawn(process.execPath, ['--import', 'tsx', this.entry], {
      cwd: join(__dirname, '..', '..'),
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // A generous window: a worker restarted under load can log megabytes of retried-task warnings right
    // after the line a test waits for, and a short window would let that line slide out unseen.
    const keep = (chunk: Buffer) =>
      (this.output = (this.output + chunk.toString()).slice(-OUTPUT_KEPT_CHARS));
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    // Never outlive the test process, whatever happens to it.
    const child = this.child;
    process.once('exit', () => child.kill('SIGKILL'));
  }

  async waitForOutput(pattern: RegExp, withinMs = 90_000): Promise<void> {
    await until(
      () => Promise.resolve(pattern.test(this.output)),
      withinMs,
      () => this.output,
    );
  }

  /** SIGKILL: no drain, no goodbye. Resolves once the process is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}

/** One request to a server the test runs as a process (fetch with JSON helpers and a deadline). */
export async function requestAt(
  baseUrl: string,
  path: string,
  init: RequestInit & { json?: unknown } = {},
  deadlineMs = 15_000,
): Promise<TestResponse> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined) headers.set('content-type', 'application/json');
  const response = await fetch(`${baseUrl}${path}`, {
    ...rest,
    headers,
    body: json !== undefined ? JSON.stringify(json) : rest.body,
    signal: AbortSignal.timeout(deadlineMs),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** Polls `check` every 200 ms until it holds; after `withinMs` fails with `context()` (a process's output). */
export async function until(
  check: () => Promise<boolean>,
  withinMs: number,
  context?: () => string,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline)
      throw new Error(
        `condition not met within ${withinMs} ms${context ? `\n${context().slice(-3000)}` : ''}`,
      );
    await delay(200);
  }
}
