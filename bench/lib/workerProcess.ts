import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../../workers/processMemory';

export interface WorkerProcess {
  /** The worker's own process id (it runs the workflows; no wrapper in between). */
  pid: number;
  /** The process's recent output (stdout and stderr), for failure reports. */
  output(): string;
  /** SIGTERM (graceful: in-flight tasks finish), SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const KEPT_OUTPUT_CHARS = 64 * 1024;

/**
 * The production worker (`workers/runWorker.ts`, through the local stack's entry `dev/worker.ts`, which
 * adds the stand-in messenger's bridge delivery) in its own process, as deployed: with
 * OPERATOR_PRIVATE_KEY in `env` it serves the settlement activities and starts the deposit monitors.
 * Resolves once it polls its task queues.
 */
export async function startWorkerProcess(
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<WorkerProcess> {
  // The worker itself, not tsx's CLI wrapper: a kill reaches the process that runs the workflows.
  const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', 'tsx', 'dev/worker.ts'], {
    cwd: join(__dirname, '..', '..'),
    env: { ...process.env, ...WORKER_PROCESS_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-KEPT_OUTPUT_CHARS);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const deadline = Date.now() + timeoutMs;
  while (!/worker polling/.test(output)) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`worker exited before polling:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`worker did not start polling within ${timeoutMs} ms:\n${output}`);
    }
    await delay(100);
  }

  return {
    pid: child.pid!,
    output: () => output,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
