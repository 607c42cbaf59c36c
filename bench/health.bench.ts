import { measureLoad } from './lib/load';
import { reportBenchmark } from './lib/results';
import { startTarget } from './lib/target';

/** /health through the full Koa stack vs a bare node:http server: same machine, generator and run. */
async function main(): Promise<void> {
  const baselineTarget = await startTarget('bareHealth.ts');
  const baseline = await measureLoad({ url: `${baselineTarget.url}/health` });
  await baselineTarget.stop();

  const koaTarget = await startTarget('api.ts');
  const koa = await measureLoad({ url: `${koaTarget.url}/health` });
  await koaTarget.stop();

  reportBenchmark('health', {
    load: { connections: 32, durationSec: 5 },
    baseline: { server: 'node:http', ...baseline },
    subject: { server: 'koa app (request id, JSON access log, metrics, error body)', ...koa },
    ratios: {
      throughputKoaVsBare: koa.requestsPerSec / baseline.requestsPerSec,
      p99LatencyKoaVsBare: koa.latencyP99Ms / Math.max(baseline.latencyP99Ms, 0.001),
    },
  });
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
