import { reportBenchmark } from './lib/results';
import { machineLoad, measureRounds } from './lib/rounds';
import { startTarget, type BenchTarget } from './lib/target';

/**
 * `/health` through the full Koa stack (request id, JSON access log at info, metrics, error body, rate
 * limits, router) vs a bare node:http server answering the same body: same machine, same generator, one
 * run, the two alternating over ROUNDS. Latencies come from autocannon's per-response hrtime (bench/lib/load.ts),
 * to the microsecond: the whole-millisecond p99 of a bare server is 0 and once printed a 1000× ratio.
 */
const ROUNDS = 3;
const LOAD = { connections: 32, durationSec: 5 };

async function main(): Promise<void> {
  const machineAtStart = machineLoad();
  const targets: BenchTarget[] = [];
  try {
    const bare = await startTarget('bareHealth.ts');
    targets.push(bare);
    const app = await startTarget('api.ts');
    targets.push(app);
    const { figures, machine } = await measureRounds(
      {
        baseline: { url: `${bare.url}/health`, ...LOAD },
        subject: { url: `${app.url}/health`, ...LOAD },
      },
      ROUNDS,
    );
    const { baseline, subject } = figures;
    const describe = (f: { requestsPerSec: number; latencyP99Ms: number }) =>
      `${f.requestsPerSec.toFixed(0)} req/s, p99 ${f.latencyP99Ms.toFixed(3)} ms`;
    const throughput = subject.requestsPerSec / baseline.requestsPerSec;
    reportBenchmark('health', {
      load: {
        ...LOAD,
        rounds: ROUNDS,
        order:
          'one settling round discarded, then baseline and subject alternate; top-level figures are means over rounds',
      },
      machine: { atStart: machineAtStart, atEnd: machineLoad(), ...machine },
      baseline: { server: 'node:http, the same body', ...baseline },
      subject: {
        server:
          'full Koa app (request id, JSON access log at info, metrics, error body, rate limits, router)',
        ...subject,
      },
      ratios: {
        throughputKoaVsBare: throughput,
        p99LatencyKoaVsBare: subject.latencyP99Ms / baseline.latencyP99Ms,
      },
      /** The p99 difference too: a ratio of two sub-millisecond figures is the noisier of the two views. */
      p99DifferenceMs: subject.latencyP99Ms - baseline.latencyP99Ms,
      goals: [
        {
          label: '/health through the full app vs bare node:http (throughput)',
          now: throughput,
          goal: { atLeast: 0.6 },
          subject: `${describe(subject)} (full app)`,
          baseline: `${describe(baseline)} (bare node:http)`,
        },
      ],
    });
  } finally {
    for (const target of targets) await target.stop().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
