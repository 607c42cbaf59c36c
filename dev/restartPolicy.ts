/**
 * When the dev supervisor (dev/start.ts) restarts a crashed process, and when it gives up: pure, so the
 * rules are tested without a process. A crash is restarted after a back-off that doubles with each crash
 * of the same process in the counting window (1 s, 2 s, 4 s … up to 30 s); the fifth crash of one process
 * in two minutes is a crash loop, which a restart would only repeat, so the stack stops and says so.
 */

export interface RestartPolicy {
  /** The back-off before the first restart; each further crash in `countWindowMs` doubles it. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** The window the restart line counts crashes in ("2nd time in 10 min"), and the back-off grows in. */
  countWindowMs: number;
  /** This many crashes of one process within `crashLoopWindowMs` is a crash loop. */
  crashLoopCrashes: number;
  crashLoopWindowMs: number;
}

export const DEV_RESTART_POLICY: RestartPolicy = {
  firstDelayMs: 1_000,
  maxDelayMs: 30_000,
  countWindowMs: 10 * 60_000,
  crashLoopCrashes: 5,
  crashLoopWindowMs: 2 * 60_000,
};

/** How a process ended: the signal that killed it, or its exit code. */
export type ExitCause = { signal: NodeJS.Signals } | { code: number };

export type CrashDecision =
  | {
      action: 'restart';
      delayMs: number;
      /** The line to print once the process runs again: `api-1 restarted after SIGKILL, 2nd time in 10 min`. */
      line: string;
    }
  | {
      action: 'stop';
      /** Why the stack stops: `api-1 crashed 5 times in 2 min (last: exit code 1): a crash loop`. */
      reason: string;
    };

/**
 * One process's crashes, and what to do about the one that just happened. `crashTimes` are the earlier
 * crashes' times (ms), oldest first; the caller appends `now` once it has decided.
 */
export function decideAfterCrash({
  name,
  cause,
  crashTimes,
  now,
  policy = DEV_RESTART_POLICY,
}: {
  name: string;
  cause: ExitCause;
  crashTimes: readonly number[];
  now: number;
  policy?: RestartPolicy;
}): CrashDecision {
  const within = (windowMs: number) => crashTimes.filter((time) => now - time < windowMs).length + 1;
  const inLoopWindow = within(policy.crashLoopWindowMs);
  if (inLoopWindow >= policy.crashLoopCrashes)
    return {
      action: 'stop',
      reason:
        `${name} crashed ${inLoopWindow} times in ${minutes(policy.crashLoopWindowMs)} ` +
        `(last: ${describeExit(cause)}): a crash loop, which restarting would only repeat`,
    };
  const counted = within(policy.countWindowMs);
  return {
    action: 'restart',
    delayMs: Math.min(policy.firstDelayMs * 2 ** (counted - 1), policy.maxDelayMs),
    line: `${name} restarted after ${describeExit(cause)}, ${ordinal(counted)} time in ${minutes(policy.countWindowMs)}`,
  };
}

/** `SIGKILL`, or `exit code 1`. */
export function describeExit(cause: ExitCause): string {
  return 'signal' in cause ? cause.signal : `exit code ${cause.code}`;
}

/** The crash times still relevant to the policy (older ones can no longer count). */
export function recentCrashes(
  crashTimes: readonly number[],
  now: number,
  policy = DEV_RESTART_POLICY,
): number[] {
  const keepMs = Math.max(policy.countWindowMs, policy.crashLoopWindowMs);
  return crashTimes.filter((time) => now - time < keepMs);
}

function minutes(ms: number): string {
  return `${ms / 60_000} min`;
}

/** 1st, 2nd, 3rd, 4th … 11th, 12th, 13th … 21st, 22nd. */
export function ordinal(count: number): string {
  const teens = count % 100 >= 11 && count % 100 <= 13;
  const suffix = teens ? 'th' : (['th', 'st', 'nd', 'rd'][count % 10] ?? 'th');
  return `${count}${suffix}`;
}
