import { randomUUID } from 'node:crypto';
import { createDb } from '../db/client';
import { createTemporalClient } from '../workflowClient/connection';
import { startSessionWorkflow } from '../workflowClient/sessions';
import { taskQueueNames } from '../workflows/taskQueues';
import { latencyPercentiles, type LoadFigures } from './lib/load';
import { reportBenchmark } from './lib/results';
import { machineLoad, measureRounds } from './lib/rounds';
import { seedMerchantWithApiKey } from './lib/seedMerchant';
import { startBenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';

/**
 * Payment sessions under load (issues 4 and 20). The subject is `POST /v1/sessions` (sk_ check, payment
 * options with a CREATE2 deposit address on each of the three local testnets, the rows written, a real
 * workflow start on the Temporal dev server, the start recorded). The baseline is what the route cannot
 * do without: a raw loop of the same workflow starts against the same dev server, from this process, with
 * the same concurrency. It calls `startSessionWorkflow` (workflowClient/sessions.ts), as the route does: the
 * session workflow type, the sessions task queue, the same search attributes and id-reuse policy, so the
 * server does the same work per start. No worker polls in this benchmark, for either side: a start's cost
 * on the server does not depend on the workflow's code, and a no-op workflow would have measured the same
 * thing under another name. The public status read is measured beside them. The loads alternate over ROUNDS.
 */
const ROUNDS = 3;
const LOAD = { connections: 32, durationSec: 5 };
/** A fixed sandbox body, no Idempotency-Key: every request creates a new session. */
const CREATE_BODY = JSON.stringify({ amount: '19.99', merchantName: 'Bench Shop', sandboxMode: true });

/**
 * `concurrency` loops, each starting one workflow after another for `durationSec`, after a 1 s warm-up
 * (as measureLoad does for HTTP). Every start must succeed; the latencies are hrtime, per start.
 */
async function rawStartLoop(
  start: () => Promise<unknown>,
  { connections, durationSec }: { connections: number; durationSec: number },
): Promise<LoadFigures & { started: number }> {
  const run = async (seconds: number) => {
    const latenciesMs: number[] = [];
    let errors = 0;
    const began = performance.now();
    const until = began + seconds * 1000;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < until) {
          const sent = process.hrtime.bigint();
          try {
            await start();
            latenciesMs.push(Number(process.hrtime.bigint() - sent) / 1e6);
          } catch {
            errors += 1;
          }
        }
      }),
    );
    return { latenciesMs, errors, elapsedSec: (performance.now() - began) / 1000 };
  };
  await run(1);
  const { latenciesMs, errors, elapsedSec } = await run(durationSec);
  return {
    requestsPerSec: latenciesMs.length / elapsedSec,
    ...latencyPercentiles(latenciesMs),
    requests: latenciesMs.length + errors,
    non2xx: 0,
    errors,
    started: latenciesMs.length,
  };
}

async function main(): Promise<void> {
  const machineAtStart = machineLoad();
  const services = await startBenchServices({ chains: true });
  let target: BenchTarget | undefined;
  const temporal = await createTemporalClient({
    address: services.temporalAddress,
    namespace: services.temporalNamespace,
  });
  try {
    const { merchantId, rawKey } = await seedMerchantWithApiKey(services.databaseUrl);
    // Access logs at info, written nowhere, as in the health benchmark (services.env lifts the per-IP
    // limit on public session reads: every request here comes from 127.0.0.1). The start deadline is the
    // tests' 20 s, not production's 2 s: the baseline's starts have no deadline, and
    // on a loaded 2-core machine a start's p99 passes 2 s, which answers 201 with the start left to the
    // reconciler (and fails the check below) instead of measuring it.
    target = await startTarget('api.ts', [], {
      ...services.env,
      LOG_LEVEL: 'info',
      TEMPORAL_START_TIMEOUT_MS: '20000',
    });
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

    // The baseline's starts: the route's own call, for sessions that exist nowhere else (ids of their own).
    const sessionsQueue = taskQueueNames(process.env.TEMPORAL_TASK_QUEUE_PREFIX ?? '').sessions;
    let baselineStarted = 0;
    const startOne = async () => {
      const outcome = await startSessionWorkflow(temporal.client, {
        sessionId: randomUUID(),
        merchantId,
        sandboxMode: true,
        expiresAt: new Date(Date.now() + 3_600_000),
        taskQueue: sessionsQueue,
      });
      if (outcome !== 'started') throw new Error(`baseline start answered ${outcome}`);
    };
    const { figures, machine } = await measureRounds(
      {
        baseline: async () => {
          const figures = await rawStartLoop(startOne, LOAD);
          baselineStarted += figures.started;
          return figures;
        },
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
    const { baseline, create, status } = figures;

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

    const describe = (f: { requestsPerSec: number; latencyP99Ms: number }) =>
      `${f.requestsPerSec.toFixed(0)} req/s, p99 ${f.latencyP99Ms.toFixed(1)} ms`;
    const createVsStarts = create.requestsPerSec / baseline.requestsPerSec;
    reportBenchmark('sessions', {
      load: {
        ...LOAD,
        rounds: ROUNDS,
        order:
          'one settling round discarded, then baseline, create, status alternate; top-level figures are means over rounds',
      },
      machine: { atStart: machineAtStart, atEnd: machineLoad(), ...machine },
      sessionsCreated: Number(sessions.total),
      sessionsWithStartedWorkflow: Number(sessions.started),
      baselineWorkflowsStarted: baselineStarted,
      chains: services.chains.map((chain) => chain.chainId),
      baseline: {
        route:
          'raw loop of client.workflow.start (startSessionWorkflow: session workflow type, sessions task queue, search attributes), same concurrency, same dev server',
        ...baseline,
      },
      create: { route: 'POST /v1/sessions (sandboxMode, sk_ key, workflow started)', ...create },
      status: { route: 'GET /v1/sessions/{id}/status (public)', ...status },
      ratios: {
        createThroughputVsWorkflowStarts: createVsStarts,
        createP99LatencyVsWorkflowStarts: create.latencyP99Ms / baseline.latencyP99Ms,
        statusThroughputVsWorkflowStarts: status.requestsPerSec / baseline.requestsPerSec,
      },
      goals: [
        {
          label: 'POST /v1/sessions vs a raw loop of Temporal workflow starts (throughput)',
          now: createVsStarts,
          goal: { atLeast: 0.5 },
          subject: `${describe(create)} (POST /v1/sessions)`,
          baseline: `${describe(baseline)} (raw startSessionWorkflow loop, ${LOAD.connections} in flight)`,
        },
      ],
    });
    process.stdout.write(
      `  ${[describe(baseline), describe(create), describe(status)].join('; ')} ` +
        `(${sessions.total} sessions, all started; ${baselineStarted} baseline starts)\n`,
    );
  } finally {
    await target?.stop().catch(() => undefined);
    await temporal.close().catch(() => undefined);
    await services.stop();
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
