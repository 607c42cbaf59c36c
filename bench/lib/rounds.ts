import { cpus, loadavg } from 'node:os';
import { measureLoad, type LoadFigures, type LoadOptions } from './load';

export interface RoundsFigures extends LoadFigures {
  /** Each round's own figures; the top-level ones are their means (p99 too: a mean of per-round p99s). */
  rounds: LoadFigures[];
}

/**
 * Measures every load in turn, `rounds` times over, so a burst of other work on the shared machine
 * hits subject and baseline alike instead of one of them. Throws when any answer was not 2xx or a
 * request failed: a cheap 4xx would make the figures measure the wrong thing.
 *
 * One settling round runs first and is discarded: right after the services start, every load ran
 * about 10× slower in its first round here (Postgres and Temporal settling, cold JIT and pools).
 */
export async function measureAlternating<Name extends string>(
  loads: Record<Name, LoadOptions>,
  rounds: number,
): Promise<Record<Name, RoundsFigures>> {
  const names = Object.keys(loads) as Name[];
  const figures = Object.fromEntries(names.map((name) => [name, [] as LoadFigures[]])) as Record<
    Name,
    LoadFigures[]
  >;
  for (const name of names) await measureLoad(loads[name]);
  for (let round = 0; round < rounds; round++) {
    for (const name of names) figures[name].push(await measureLoad(loads[name]));
  }
  const failed = names.filter((name) => figures[name].some((round) => round.non2xx > 0 || round.errors > 0));
  if (failed.length) {
    throw new Error(
      `non-2xx answers or errors under load: ${failed.map((name) => `${name} ${JSON.stringify(figures[name])}`).join('; ')}`,
    );
  }
  return Object.fromEntries(names.map((name) => [name, meanOfRounds(figures[name])])) as Record<
    Name,
    RoundsFigures
  >;
}

function meanOfRounds(rounds: LoadFigures[]): RoundsFigures {
  const sum = (pick: (figures: LoadFigures) => number) =>
    rounds.reduce((total, figures) => total + pick(figures), 0);
  return {
    requestsPerSec: sum((figures) => figures.requestsPerSec) / rounds.length,
    latencyP50Ms: sum((figures) => figures.latencyP50Ms) / rounds.length,
    latencyP99Ms: sum((figures) => figures.latencyP99Ms) / rounds.length,
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
