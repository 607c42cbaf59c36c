import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface BenchTarget {
  url: string;
  /** The tsx wrapper's process id; the server runs in its child (bench/lib/processMemory.ts finds it). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Runs a server in its own process (so the load generator does not share its event loop) and
 * resolves once it prints `LISTENING <port>`.
 */
export async function startTarget(
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<BenchTarget> {
  const child: ChildProcess = spawn(
    process.execPath,
    [require.resolve('tsx/cli'), join(__dirname, '..', 'targets', script), ...args],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /LISTENING (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
