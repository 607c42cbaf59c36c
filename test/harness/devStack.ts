import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CONFIG_VARIABLES } from '../../config';
import { findFreePort } from '../../dev/services/freePort';
import type { StackDescription } from '../../dev/stackDescription';
import { readStackFile } from '../../dev/stackFile';
import { until } from './projectProcess';

/**
 * `npm start` as a user runs it, on ports and in a state folder of its own (STABLEPAY_DEV_DIR), so it
 * never meets a developer's stack or another test run's: its terminal output, its stack file, and the
 * processes its supervisor runs, found in /proc.
 */
export interface DevStack {
  /** The balancer (or the single api) on PORT. */
  url: string;
  stack: StackDescription;
  stateDir: string;
  supervisorPid: number;
  /** What the terminal shows so far. */
  output(): string;
  /** Resolves once the terminal shows `pattern` after `from` characters of output (a mark taken earlier). */
  untilOutput(pattern: RegExp, from: number, withinMs?: number): Promise<RegExpMatchArray>;
  /** The api replicas' own addresses as the banner names them (`api-1` → its port). */
  apiReplicaPorts: Map<string, number>;
  /** The supervisor's children with `script` among their arguments (`api/main.ts`, `dev/worker.ts`), with their PORT. */
  processesRunning(script: string): { pid: number; args: string[]; port?: number }[];
  /** Ctrl-C in its terminal; resolves once npm and the supervisor have exited and the state folder is gone. */
  stop(): Promise<void>;
}

const root = resolve(__dirname, '..', '..');

export async function startDevStack(env: Record<string, string>, withinMs = 300_000): Promise<DevStack> {
  const stateDir = await mkdtemp(join(tmpdir(), 'stablepay-npm-start-'));
  const port = await findFreePort();
  // The test run's own services are named by config variables in this process's environment: the stack
  // starts its own, as on a developer's machine.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !(CONFIG_VARIABLES as readonly string[]).includes(name)),
  );
  // A process group of its own, as a terminal's foreground job: Ctrl-C is a SIGINT to the group.
  const npm: ChildProcess = spawn('npm', ['start'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...inherited,
      STABLEPAY_DEV_DIR: stateDir,
      PORT: String(port),
      SIGNER_PORT: String(await findFreePort()),
      DNS_PORT: String(await findFreePort()),
      ...env,
    },
  });
  let output = '';
  for (const stream of [npm.stdout!, npm.stderr!])
    stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-1_000_000)));
  const exited = new Promise<void>((resolveExit) => npm.once('exit', () => resolveExit()));
  // Never outlive the test process: npm's group, and the supervisor's (a session of its own) once known.
  const killGroupOnExit = (group: number) =>
    process.once('exit', () => {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // already gone
      }
    });
  killGroupOnExit(npm.pid!);

  const untilOutput = async (pattern: RegExp, from: number, within = 120_000) => {
    let match: RegExpMatchArray | null = null;
    const ended = () => npm.exitCode !== null || npm.signalCode !== null;
    await until(
      async () => {
        match = output.slice(from).match(pattern);
        return match !== null || ended();
      },
      within,
      () => output,
    );
    if (match === null)
      throw new Error(`npm start exited (${npm.exitCode ?? npm.signalCode}):\n${output.slice(-3000)}`);
    return match;
  };
  const banner = await untilOutput(/kill (\d+), the supervisor/, 0, withinMs);
  const supervisorPid = Number(banner[1]);
  killGroupOnExit(supervisorPid);
  const stack = readStackFile(join(stateDir, 'stack.json'))!;
  const replicasLine = output.match(/HAProxy in front of \d+ api replicas: (.*)/)?.[1] ?? '';
  const apiReplicaPorts = new Map(
    [...replicasLine.matchAll(/(api-\d+) [\d.]+:(\d+)/g)].map((match) => [match[1]!, Number(match[2])]),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    stack,
    stateDir,
    supervisorPid,
    output: () => output,
    untilOutput: (pattern, from, within) => untilOutput(pattern, from, within),
    apiReplicaPorts,
    processesRunning: (script) => childrenOf(supervisorPid).filter((child) => child.args.includes(script)),
    async stop() {
      if (npm.exitCode === null && npm.signalCode === null) process.kill(-npm.pid!, 'SIGINT');
      await exited;
      // npm may exit on the signal itself before the foreground process it ran has seen the stack stop.
      await until(
        async () => !isRunning(supervisorPid),
        90_000,
        () => output,
      );
      npm.stdout!.destroy();
      npm.stderr!.destroy();
      // Its Postgres, Temporal and chain state: about 60 MB per run.
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** The processes whose parent is `pid`, with their arguments and PORT. */
function childrenOf(pid: number): { pid: number; args: string[]; port?: number }[] {
  const children: { pid: number; args: string[]; port?: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`: comm may hold spaces, so the fields count from its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== pid) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const port = readFileSync(`/proc/${entry}/environ`, 'utf8')
        .split('\0')
        .find((variable) => variable.startsWith('PORT='));
      children.push({ pid: Number(entry), args, port: port ? Number(port.slice(5)) : undefined });
    } catch {
      // exited meanwhile
    }
  }
  return children;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
