import { cpus, loadavg } from 'node:os';
import { measureLoad, type LoadFigures, type LoadOptions } from './load';

/** The 1-minute load average at the start and end of one measured round. */
export interface RoundLoad {
  atStart: number;
  atEnd: number;
}

export interface RoundsFigures extends LoadFigures {
  /** Each kept round's own figures; the top-level ones are their means (p99 too: a mean of per-round p99s). */
  rounds: LoadFigures[];
}

export interface AlternatingResult<Name extends string> {
  figures: Record<Name, RoundsFigures>;
  /** Machine load around each kept round, and how many rounds were thrown away because it moved. */
  machine: { cpus: number; rounds: (RoundLoad & { reruns: number })[] };
}

/** A round whose load average moved by more than this measured a different machine at its end. */
export const LOAD_MOVED_LIMIT = 1;
/** A round is measured at most this many extra times; the last one is kept, and says so. */
const MAX_RERUNS = 2;

/** A load is either an HTTP load for autocannon or any function measuring one round of it. */
export type Load = LoadOptions | (() => Promise<LoadFigures>);

function measure(load: Load): Promise<LoadFigures> {
  return typeof load === 'function' ? load() : measureLoad(load);
}

/**
 * Measures every load in turn, `rounds` times over, so a burst of other work on the shared machine
 * hits subject and baseline alike instead of one of them. The load average is read before and after
 * each round; a round during which it moved by more than LOAD_MOVED_LIMIT is measured again (up to
 * twice). Throws when any answer was not 2xx or a request failed: a cheap 4xx would make the figures
 * measure the wrong thing.
 *
 * One settling round runs first and is discarded: right after the services start, every load ran
 * about 10× slower in its first round here (Postgres and Temporal settling, cold JIT and pools).
 */
export async function measureRounds<Name extends string>(
  loads: Record<Name, Load>,
  rounds: number,
): Promise<AlternatingResult<Name>> {
  const names = Object.keys(loads) as Name[];
  const figures = Object.fromEntries(names.map((name) => [name, [] as LoadFigures[]])) as Record<
    Name,
    LoadFigures[]
  >;
  const roundLoads: (RoundLoad & { reruns: number })[] = [];
  for (const name of names) await measure(loads[name]);
  for (let round = 0; round < rounds; round++) {
    const { value: measured, load } = await measureAtSteadyLoad(
      async () => {
        const one: Partial<Record<Name, LoadFigures>> = {};
        for (const name of names) one[name] = await measure(loads[name]);
        return one as Record<Name, LoadFigures>;
      },
      `round ${round + 1}`,
    );
    for (const name of names) figures[name].push(measured[name]);
    roundLoads.push(load);
  }
  const failed = names.filter((name) => figures[name].some((round) => round.non2xx > 0 || round.errors > 0));
  if (failed.length) {
    throw new Error(
      `non-2xx answers or errors under load: ${failed.map((name) => `${name} ${JSON.stringify(figures[name])}`).join('; ')}`,
    );
  }
  return {
    figures: Object.fromEntries(names.map((name) => [name, meanOfRounds(figures[name])])) as Record<
      Name,
      RoundsFigures
    >,
    machine: { cpus: cpus().length, rounds: roundLoads },
  };
}

/**
 * Runs one measured round, reading the load average before and after it; a round during which it
 * moved by more than LOAD_MOVED_LIMIT measured two different machines and is run again (up to
 * MAX_RERUNS times; the last one is kept and its load says so).
 */
export async function measureAtSteadyLoad<T>(
  measureOnce: () => Promise<T>,
  label: string,
): Promise<{ value: T; load: RoundLoad & { reruns: number } }> {
  for (let reruns = 0; ; reruns++) {
    const atStart = loadavg()[0]!;
    const value = await measureOnce();
    const atEnd = loadavg()[0]!;
    if (Math.abs(atEnd - atStart) > LOAD_MOVED_LIMIT && reruns < MAX_RERUNS) {
      process.stdout.write(
        `  ${label}: load average moved ${atStart.toFixed(2)} → ${atEnd.toFixed(2)}, measuring it again\n`,
      );
      continue;
    }
    return { value, load: { atStart, atEnd, reruns } };
  }
}

/** measureRounds for callers that only want the figures (the machine load is printed either way). */
export async function measureAlternating<Name extends string>(
  loads: Record<Name, Load>,
  rounds: number,
): Promise<Record<Name, RoundsFigures>> {
  return (await measureRounds(loads, rounds)).figures;
}

function meanOfRounds(rounds: LoadFigures[]): RoundsFigures {
  const mean = (pick: (figures: LoadFigures) => number) =>
    rounds.reduce((total, figures) => total + pick(figures), 0) / rounds.length;
  const sum = (pick: (figures: LoadFigures) => number) =>
    rounds.reduce((total, figures) => total + pick(figures), 0);
  return {
    requestsPerSec: mean((figures) => figures.requestsPerSec),
    latencyP50Ms: mean((figures) => figures.latencyP50Ms),
    latencyP99Ms: mean((figures) => figures.latencyP99Ms),
    requests: sum((figures) => figures.requests),
    non2xx: sum((figures) => figures.non2xx),
    errors: sum((figures) => figures.errors),
    rounds,
  };
}

/** How busy the machine was: figures from a 2-core box shared with test runs need this beside them. */
export function machineLoad(): { cpus: number; loadAverage1m: number } {
  return { cpus: cpus().length, loadAverage1m: loadavg()[0]! };
}
