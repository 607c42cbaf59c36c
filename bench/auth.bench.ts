import { reportBenchmark } from './lib/results';
import { machineLoad, measureRounds } from './lib/rounds';
import { seedMerchantWithApiKey } from './lib/seedMerchant';
import { startBenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';

/**
 * What the sk_ API-key check costs (issue 3): `GET /v1/webhooks` (the SK webhook list) through the
 * full app with the real check, against the same app whose sk authenticator only sets the merchant
 * (targets/apiWithoutAuth.ts). Same Postgres, same generator, one run; the two alternate over ROUNDS.
 */
const ROUTE = '/v1/webhooks';
const ROUNDS = 3;
const LOAD = { connections: 32, durationSec: 5 };

/** Both apps must answer the same 200 before load: a 401 is cheap and would flatter the subject. */
async function expectSameAnswer(requests: { url: string; headers: Record<string, string> }[]): Promise<void> {
  const answers = await Promise.all(
    requests.map(async ({ url, headers }) => {
      const response = await fetch(url, { headers });
      return `${response.status} ${await response.text()}`;
    }),
  );
  if (!answers[0]!.startsWith('200 ') || answers.some((answer) => answer !== answers[0])) {
    throw new Error(`targets disagree before load: ${answers.join(' | ')}`);
  }
}

async function main(): Promise<void> {
  const machineAtStart = machineLoad();
  const services = await startBenchServices();
  const targets: BenchTarget[] = [];
  try {
    const { merchantId, rawKey } = await seedMerchantWithApiKey(services.databaseUrl);
    // Access logs at info, written nowhere (as in the health benchmark): both apps do the same work but auth.
    const env = { ...services.env, LOG_LEVEL: 'info' };
    const withAuth = await startTarget('api.ts', [], env);
    targets.push(withAuth);
    const withoutAuth = await startTarget('apiWithoutAuth.ts', [], { ...env, BENCH_MERCHANT_ID: merchantId });
    targets.push(withoutAuth);

    // The baseline is sent no credential at all: its authenticator must not need one.
    const subjectLoad = {
      url: `${withAuth.url}${ROUTE}`,
      headers: { authorization: `Bearer ${rawKey}` },
      ...LOAD,
    };
    const baselineLoad = { url: `${withoutAuth.url}${ROUTE}`, headers: {}, ...LOAD };
    await expectSameAnswer([subjectLoad, baselineLoad]);
    const { figures, machine } = await measureRounds(
      { baseline: baselineLoad, subject: subjectLoad },
      ROUNDS,
    );
    const { baseline, subject } = figures;
    const throughput = subject.requestsPerSec / baseline.requestsPerSec;
    const describe = (f: { requestsPerSec: number; latencyP99Ms: number }) =>
      `${f.requestsPerSec.toFixed(0)} req/s, p99 ${f.latencyP99Ms.toFixed(2)} ms`;

    reportBenchmark('auth', {
      route: `GET ${ROUTE}`,
      load: {
        ...LOAD,
        rounds: ROUNDS,
        order:
          'one settling round discarded, then baseline and subject alternate; top-level figures are means over rounds',
      },
      machine: { atStart: machineAtStart, atEnd: machineLoad(), ...machine },
      baseline: {
        server: 'full app, sk authenticator replaced by a fixed merchant (no credential read)',
        ...baseline,
      },
      subject: {
        server:
          'full app, real sk_ check (SHA-256, api_keys lookup by hash through the per-process cache LISTEN/NOTIFY invalidates)',
        ...subject,
      },
      ratios: {
        throughputAuthVsNoAuth: throughput,
        p99LatencyAuthVsNoAuth: subject.latencyP99Ms / baseline.latencyP99Ms,
      },
      goals: [
        {
          label: `SK-authenticated route vs the same route without auth (GET ${ROUTE}, throughput)`,
          now: throughput,
          goal: { atLeast: 0.8 },
          subject: `${describe(subject)} (sk_ check)`,
          baseline: `${describe(baseline)} (fixed merchant, no credential)`,
        },
      ],
    });
    process.stdout.write(
      `  requests/s: auth ${subject.requestsPerSec.toFixed(0)}, no auth ${baseline.requestsPerSec.toFixed(0)}; ` +
        `p99 ms: auth ${subject.latencyP99Ms.toFixed(1)}, no auth ${baseline.latencyP99Ms.toFixed(1)} ` +
        `(load average ${machineAtStart.loadAverage1m.toFixed(1)} on ${machineAtStart.cpus} cores at start)\n`,
    );
  } finally {
    for (const target of targets) await target.stop().catch(() => undefined);
    await services.stop();
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
