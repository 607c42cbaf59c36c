import type { ChildProcess } from 'node:child_process';

/**
 * Children to kill when this process exits without stopping them. One `exit` listener serves them all:
 * a listener per child passed Node's limit of ten with the dev stack's chains and bundlers
 * (a MaxListenersExceededWarning on every start).
 */
const children = new Map<ChildProcess, NodeJS.Signals>();

function killAll(): void {
  for (const [child, signal] of children) child.kill(signal);
}

/** Kills `child` with `signal` if this process exits first; the returned function forgets it. */
export function killOnExit(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): () => void {
  if (children.size === 0) process.once('exit', killAll);
  children.set(child, signal);
  return () => {
    children.delete(child);
    if (children.size === 0) process.removeListener('exit', killAll);
  };
}
