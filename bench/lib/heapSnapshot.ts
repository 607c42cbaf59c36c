import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * A heap snapshot of another Node process started with `--heapsnapshot-signal=SIGWINCH
 * --diagnostic-dir=<dir>`: signals it and waits until the file it writes is complete (Node writes it
 * from the main thread, pausing that process; the worker threads' isolates, where Temporal runs the
 * workflows, are not in it). Resolves with the file's path. Not SIGUSR2, Node's example: Temporal's
 * runtime shuts its workers down on it. SIGWINCH does nothing to a process that does not listen.
 */
export async function takeHeapSnapshot(pid: number, dir: string, timeoutMs = 300_000): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGWINCH');
  const deadline = Date.now() + timeoutMs;
  let lastSize = -1;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`no complete heap snapshot from ${pid} in ${timeoutMs} ms`);
    await delay(1000);
    const file = readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (!file) continue;
    const path = join(dir, file);
    const size = statSync(path).size;
    // Complete: the size stopped moving and the JSON is closed.
    if (size > 0 && size === lastSize && readFileSync(path, 'utf8').trimEnd().endsWith('}')) return path;
    lastSize = size;
  }
}

export interface HeapSummary {
  totalBytes: number;
  nodes: number;
  /** Self size and count per constructor (objects, closures) or node type (strings, arrays, code…). */
  byKind: Map<string, { count: number; bytes: number }>;
}

/** Self sizes of a .heapsnapshot's nodes added up per constructor or node type. */
export function summariseHeapSnapshot(path: string): HeapSummary {
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const typeNames = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byKind = new Map<string, { count: number; bytes: number }>();
  let totalBytes = 0;
  for (let offset = 0; offset < snapshot.nodes.length; offset += width) {
    const type = typeNames[snapshot.nodes[offset + typeAt]!]!;
    const size = snapshot.nodes[offset + sizeAt]!;
    // Objects and closures by their constructor's name; everything else by its type.
    const kind =
      type === 'object' || type === 'closure'
        ? `${type === 'closure' ? 'closure ' : ''}${snapshot.strings[snapshot.nodes[offset + nameAt]!]}`
        : `(${type})`;
    const entry = byKind.get(kind) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += size;
    byKind.set(kind, entry);
    totalBytes += size;
  }
  return { totalBytes, nodes: snapshot.nodes.length / width, byKind };
}

/** The kinds whose self size grew most between two snapshots, largest growth first. */
export function heapGrowth(before: HeapSummary, after: HeapSummary, top = 15) {
  const kinds = new Set([...before.byKind.keys(), ...after.byKind.keys()]);
  return [...kinds]
    .map((kind) => {
      const was = before.byKind.get(kind) ?? { count: 0, bytes: 0 };
      const now = after.byKind.get(kind) ?? { count: 0, bytes: 0 };
      return {
        kind,
        countBefore: was.count,
        countAfter: now.count,
        kibBefore: Math.round(was.bytes / 1024),
        kibAfter: Math.round(now.bytes / 1024),
        growthKiB: Math.round((now.bytes - was.bytes) / 1024),
      };
    })
    .sort((left, right) => right.growthKiB - left.growthKiB)
    .slice(0, top);
}
