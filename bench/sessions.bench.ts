import { createDb } from '../db/client';
import { reportBenchmark } from './lib/results';
import { machineLoad, measureAlternating } from './lib/rounds';
import { seedMerchantWithApiKey } from './lib/seedMerchant';
import { startBenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';

/**
 * Payment sessions under load (issue 4), against `/health` on the same app in the same run:
 * `POST /v1/sessions` (sk_ check, payment options for the three local testnets, one transaction,
 * a real workflow start on the Temporal dev server) and the public `GET /v1/sessions/{id}/status`.
 * Starts its own Postgres, Temporal and local chains; the three loads alternate over ROUNDS.
 */
const ROUNDS = 2;
const LOAD = { connections: 32, durationSec: 5 };
/** A fixed sandbox body, no Idempotency-Key: every request creates a new session. */
const CREATE_BODY = JSON.stringify({ amount: '19.99', merchantName: 'Bench Shop', sandboxMode: true });

async function main(): Promise<void> {
  const machineAtStart = machineLoad();
  const services = await startBenchServices({ chains: true });
  let target: BenchTarget | undefined;
  try {
    const { merchantId, rawKey } = await seedMerchantWithApiKey(services.databaseUrl);
    // Access logs at info, written nowhere, as in the health benchmark.
    target = await startTarget('api.ts', [], { ...services.env, LOG_LEVEL: 'info' });
    const createHeaders = { authorization: `Bearer ${rawKey}`, 'content-type': 'application/json' };

    // One session made before load, for the status route; it must carry payment options on every local chain.
    const created = await fetch(`${target.url}/v1/sessions`, {
      method: 'POST',
      headers: createHeaders,
      body: CREATE_BODY,
    });
    if (created.status !== 201)
      throw new Error(`session create answered ${created.status}: ${await created.text()}`);
    const { id: sessionId } = (await created.json()) as { id: string };
    const session = (await (await fetch(`${target.url}/v1/sessions/${sessionId}`)).json()) as {
      paymentOptions: { chainId: number }[];
    };
    const chainsOffered = new Set(session.paymentOptions.map((option) => option.chainId));
    if (chainsOffered.size !== services.chains.length) {
      throw new Error(
        `payment options on chains ${[...chainsOffered].join(', ')}, expected ${services.chains.map((chain) => chain.chainId).join(', ')}`,
      );
    }

    const { health, create, status } = await measureAlternating(
      {
        health: { url: `${target.url}/health`, ...LOAD },
        create: {
          url: `${target.url}/v1/sessions`,
          method: 'POST',
          headers: createHeaders,
          body: CREATE_BODY,
          ...LOAD,
        },
        status: { url: `${target.url}/v1/sessions/${sessionId}/status`, ...LOAD },
      },
      ROUNDS,
    );

    // A create whose workflow start failed still answers 201 (the reconciler starts it later) and is
    // cheaper: every session written under load must have had its workflow started for real.
    const db = createDb({ connectionString: services.databaseUrl, maxConnections: 1 });
    const sessions = await db
      .selectFrom('sessions')
      .where('merchant_id', '=', merchantId)
      .select((eb) => [
        eb.fn.countAll<string>().as('total'),
        eb.fn.count<string>('workflow_started_at').as('started'),
      ])
      .executeTakeFirstOrThrow();
    await db.destroy();
    if (sessions.total !== sessions.started)
      throw new Error(
        `${Number(sessions.total) - Number(sessions.started)} of ${sessions.total} sessions have no started workflow`,
      );

    reportBenchmark('sessions', {
      load: {
        ...LOAD,
        rounds: ROUNDS,
        order:
          'one settling round discarded, then health, create, status alternate; top-level figures are means over rounds',
      },
      machine: { atStart: machineAtStart, atEnd: machineLoad() },
      sessionsCreated: Number(sessions.total),
      chains: services.chains.map((chain) => chain.chainId),
      baseline: { route: 'GET /health', ...health },
      create: { route: 'POST /v1/sessions (sandboxMode, sk_ key, workflow started)', ...create },
      status: { route: 'GET /v1/sessions/{id}/status (public)', ...status },
      ratios: {
        createThroughputVsHealth: create.requestsPerSec / health.requestsPerSec,
        createP99LatencyVsHealth: create.latencyP99Ms / Math.max(health.latencyP99Ms, 0.001),
        statusThroughputVsHealth: status.requestsPerSec / health.requestsPerSec,
        statusP99LatencyVsHealth: status.latencyP99Ms / Math.max(health.latencyP99Ms, 0.001),
      },
    });
    const line = (name: string, figures: { requestsPerSec: number; latencyP99Ms: number }) =>
      `${name} ${figures.requestsPerSec.toFixed(0)} req/s, p99 ${figures.latencyP99Ms.toFixed(1)} ms`;
    process.stdout.write(
      `  ${[line('health', health), line('create', create), line('status', status)].join('; ')} ` +
        `(${sessions.total} sessions; load average ${machineAtStart.loadAverage1m.toFixed(1)} on ${machineAtStart.cpus} cores at start)\n`,
    );
  } finally {
    await target?.stop().catch(() => undefined);
    await services.stop();
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
