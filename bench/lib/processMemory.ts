import { readFileSync, readdirSync } from 'node:fs';

const MIB = 1024 * 1024;

/** Resident set size of a process in MiB (Linux /proc), or undefined once it has gone. */
export function residentMiB(pid: number): number | undefined {
  try {
    const kib = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : (Number(kib) * 1024) / MIB;
  } catch {
    return undefined;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/**
 * The process that does the work under `pid`: a bench target is started through tsx's CLI, which runs
 * the script in a child process and only waits for it; the server is the last process down that chain.
 */
export function serverProcessOf(pid: number): number {
  let current = pid;
  for (let children = childrenOf(current); children.length === 1; children = childrenOf(current))
    current = children[0]!;
  return current;
}
