import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * What a process costs, read from Linux's /proc: CPU time and memory of any pid on the machine (its
 * `stat` and `status` are world-readable), and the local ports of its TCP sockets (its own fds only),
 * to tell which Postgres backends serve which process.
 */

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every Linux this runs on. */
const CLOCK_TICKS_PER_SEC = 100;

/** CPU seconds the process has used so far, user and system. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) are the 12th and 13th after the name.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
}

/**
 * CPU seconds of a process and of all its children, live and exited: Postgres' work for its clients is
 * done in backends, children of the postmaster; a backend that exited is counted in cutime/cstime.
 */
export function cpuSecondsWithChildren(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // cutime, cstime: the 14th and 15th fields after the name.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let seconds = cpuSeconds(pid) + (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SEC;
  for (const child of childrenOf(pid)) {
    try {
      seconds += cpuSeconds(child);
    } catch {
      // The child exited between the listing and the read (its time is in cutime from now on).
    }
  }
  return seconds;
}

/** The parent of a process: the postmaster of a Postgres backend, say. */
export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

export interface ProcessMemory {
  /** Resident set now (VmRSS), KiB. */
  rssKiB: number;
  /** The most it was resident at once (VmHWM), KiB. */
  peakKiB: number;
  /** The private part (RssAnon): what a Postgres backend holds beyond the shared buffers it touched. */
  anonKiB: number;
}

export function processMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssKiB: kib('VmRSS'), peakKiB: kib('VmHWM'), anonKiB: kib('RssAnon') };
}

/** Local ports of the process's TCP sockets (IPv4 and IPv6): its side of every connection it holds. */
export function tcpLocalPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // closed between the listing and the read
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      // local_address is "ADDR:PORT" in hex; the inode is the tenth column.
      if (columns.length > 9 && inodes.has(columns[9]!)) ports.add(parseInt(columns[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/** Resident set size of a process in MiB, or undefined once it has gone. */
export function residentMiB(pid: number): number | undefined {
  try {
    // A zombie has no VmRSS line (read as 0): it holds nothing any more.
    const { rssKiB } = processMemory(pid);
    return rssKiB > 0 ? rssKiB / 1024 : undefined;
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

/**
 * CPU seconds of each of a process's threads, summed by thread name (`comm`: node's main thread is
 * `node`, workflow threads and libuv's pool have their own names, the Temporal core's Rust threads
 * theirs), to say which part of a process a window's CPU went to.
 */
export function cpuSecondsByThreadName(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
      byName.set(name, (byName.get(name) ?? 0) + seconds);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return byName;
}
