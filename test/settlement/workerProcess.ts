import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** A worker process (dev/worker.ts) whose output is kept for waitForOutput. */
export type WorkerChild = ChildProcess & { output?: string };

export function startWorkerProcess(env: Record<string, string>): WorkerChild {
  // `--import tsx` rather than tsx's CLI: the CLI runs the script in a grandchild, which a SIGKILL of
  // the CLI would leave running (no real crash, and an orphan after the run).
  const child: WorkerChild = spawn(process.execPath, ['--import', 'tsx', 'dev/worker.ts'], {
    cwd: join(__dirname, '..', '..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.output = '';
  child.stdout!.on('data', (chunk) => (child.output += chunk));
  child.stderr!.on('data', (chunk) => (child.output += chunk));
  return child;
}

/**
 * Waits for the worker to print `pattern`. A worker bundles its workflows with webpack before it polls:
 * on a loaded two-core machine that alone took over a minute once (CI rehearsal, 2026-11-28).
 */
export async function waitForOutput(child: WorkerChild, pattern: RegExp, timeoutMs = 150_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(child.output ?? '')) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`worker did not print ${pattern}: ${child.output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
