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

/** Child processes that are Node itself (not esbuild's service, which tsx starts beside the script). */
function nodeChildrenOf(pid: number): number[] {
  return childrenOf(pid).filter((child) => {
    try {
      const program = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0')[0] ?? '';
      return program === 'node' || program.endsWith('/node');
    } catch {
      return false;
    }
  });
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
 * the script in a child process and only waits for it; the server is the last Node process down that chain.
 */
export function serverProcessOf(pid: number): number {
  let current = pid;
  for (let children = nodeChildrenOf(current); children.length === 1; children = nodeChildrenOf(current))
    current = children[0]!;
  return current;
}
