import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { createDb } from '../db/client';
import {
  countSubmittedUsageRows,
  expectSignedResult,
  GENEROUS_PAYMASTER_LIMITS,
  measureRpcLoad,
  paymasterResultOf,
  printFigures,
  type RpcLoadFigures,
  rpcBodies,
  seedSponsoringMerchant,
} from './lib/paymasterRpc';
import { reportBenchmark } from './lib/results';
import { machineLoad, measureRounds } from './lib/rounds';
import { startBenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';

/**
 * Issue 7's paymaster benchmarks (issue 20's first row), ratios from one run with one load generator
 * (autocannon, 32 connections) against servers in their own processes, the loads alternating in rounds:
 *
 * 1. `pm_getPaymasterData` through the real api process (client id → policy reads in Postgres →
 *    signing service process over HTTP, which knows the paymaster's EntryPoint deposit per block →
 *    limits and usage row in one round trip) vs bench/targets/signOnly.ts, a Koa route that only computes the same sponsorship
 *    hash for the same operation and signs it with the same key and the same signer (signer/fastAccount.ts,
 *    the fastest signing measured by bench/signer.bench.ts): the floor of a signature over HTTP.
 *    For information, a second baseline: bench/targets/signAndInsert.ts, the same route plus one
 *    durable INSERT of the answer in its own transaction on the same Postgres, the floor of a
 *    paymaster that accounts durably (the goal stays against sign-only).
 * 2. `pm_getPaymasterStubData` vs `/health` on the same api process.
 *
 * Every request carries a fresh nonce, so each signature is over a distinct operation, as wallets
 * send them. Sponsorship limits are active: every signed request is priced against the merchant's
 * per-transaction cap and consumes its sender's hourly op and daily USD units and the platform
 * budget (all set high enough here that none refuses). bench/paymasterLimits.bench.ts measures what
 * they cost.
 */

const CONNECTIONS = 32;
const DURATION_SEC = 5;
const ROUNDS = 3;
const LOAD = { connections: CONNECTIONS, durationSec: DURATION_SEC };

/** Rows the sign + INSERT baseline wrote (its table exists once the target started). */
const countSignedAnswerRows = async (db: ReturnType<typeof createDb>): Promise<number> => {
  const { rows } = await sql<{
    count: string;
  }>`SELECT count(*)::text AS count FROM bench_signed_answers`.execute(db);
  return Number(rows[0]!.count);
};

const ratio = (subject: number, baseline: number) => subject / Math.max(baseline, 0.001);
const figure = (figures: { requestsPerSec: number; latencyP99Ms: number }) =>
  `${figures.requestsPerSec.toFixed(0)} req/s, p99 ${figures.latencyP99Ms.toFixed(1)} ms`;

async function main(): Promise<void> {
  const started = performance.now();
  const machineAtStart = machineLoad();
  const cleanups: (() => Promise<unknown>)[] = [];
  const stopLater = (target: BenchTarget) => {
    cleanups.unshift(() => target.stop());
    return target;
  };
  try {
    const services = await startBenchServices({ chains: true });
    cleanups.unshift(() => services.stop());
    const db = createDb({ connectionString: services.databaseUrl, maxConnections: 2 });
    // pg's pool resolves end() before every socket is gone; Postgres stopping meanwhile kills the process.
    cleanups.unshift(() => db.destroy().then(() => delay(300)));
    const { clientId } = await seedSponsoringMerchant(db);
    const signerEnv = { SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey, LOG_LEVEL: 'info' };

    // Baseline: hash and sign over HTTP, nothing else (the signing service's own signer).
    const signOnly = stopLater(await startTarget('signOnly.ts', [], { ...services.env, ...signerEnv }));
    // Second baseline (information): the same route plus one durable INSERT on the same Postgres.
    const signAndInsert = stopLater(
      await startTarget('signAndInsert.ts', [], { ...services.env, ...signerEnv }),
    );
    // The real path: signing service and api, each in its own process, the api reaching the signer on
    // its Unix-domain socket as `npm start` runs them. For information, a second api on the signer's TCP
    // port: what the socket is worth.
    const sharedSecret = randomBytes(32).toString('hex');
    const signerSocketPath = join(tmpdir(), `bench-signer-${process.pid}.sock`);
    const signer = stopLater(
      await startTarget('signer.ts', [], {
        ...services.env,
        ...signerEnv,
        SIGNER_SHARED_SECRET: sharedSecret,
        SIGNER_SOCKET_PATH: signerSocketPath,
      }),
    );
    const apiFor = async (signerUrl: string) =>
      stopLater(
        await startTarget('api.ts', [], {
          ...services.env,
          LOG_LEVEL: 'info',
          SIGNER_URL: signerUrl,
          SIGNER_SHARED_SECRET: sharedSecret,
          ...GENEROUS_PAYMASTER_LIMITS,
        }),
      );
    const api = await apiFor(`unix://${signerSocketPath}`);
    const apiSignerOverTcp = await apiFor(signer.url);
    const rpcUrl = `${api.url}/v1/paymaster/rpc`;
    const clientHeaders = { 'x-client-id': clientId };
    const signedBodies = rpcBodies('pm_getPaymasterData');
    const stubBodies = rpcBodies('pm_getPaymasterStubData');

    const baselineResult = await expectSignedResult(`${signOnly.url}/sign`, {}, signedBodies());
    await expectSignedResult(`${signAndInsert.url}/sign`, {}, signedBodies());
    const subjectResult = await expectSignedResult(rpcUrl, clientHeaders, signedBodies());
    await expectSignedResult(`${apiSignerOverTcp.url}/v1/paymaster/rpc`, clientHeaders, signedBodies());
    if (subjectResult.paymaster !== baselineResult.paymaster)
      throw new Error(
        `baseline signs for ${baselineResult.paymaster}, the api for ${subjectResult.paymaster}`,
      );
    const stubCheck = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...clientHeaders },
      body: stubBodies(),
    });
    const stubText = await stubCheck.text();
    if (stubCheck.status !== 200 || !paymasterResultOf(stubText))
      throw new Error(`stub data answered ${stubCheck.status}: ${stubText}`);

    // Every round measures each load in turn (subject next to its baseline, so a burst of other work
    // on the shared machine hits both), after one discarded settling round.
    const usageRowsBefore = await countSubmittedUsageRows(db, clientId);
    const insertedRowsBefore = await countSignedAnswerRows(db);
    const rpcRounds: Record<
      | 'signOnly'
      | 'signAndInsert'
      | 'getPaymasterData'
      | 'getPaymasterDataSignerOverTcp'
      | 'getPaymasterStubData',
      RpcLoadFigures[]
    > = {
      signOnly: [],
      signAndInsert: [],
      getPaymasterData: [],
      getPaymasterDataSignerOverTcp: [],
      getPaymasterStubData: [],
    };
    const rpcLoad =
      (
        name: keyof typeof rpcRounds,
        url: string,
        path: string,
        headers: Record<string, string>,
        nextBody: () => string,
      ) =>
      async () => {
        const figures = await measureRpcLoad({ url, path, headers, nextBody, ...LOAD });
        rpcRounds[name].push(figures);
        return figures;
      };
    const { figures, machine } = await measureRounds(
      {
        signOnly: rpcLoad('signOnly', signOnly.url, '/sign', {}, signedBodies),
        signAndInsert: rpcLoad('signAndInsert', signAndInsert.url, '/sign', {}, signedBodies),
        getPaymasterData: rpcLoad(
          'getPaymasterData',
          api.url,
          '/v1/paymaster/rpc',
          clientHeaders,
          signedBodies,
        ),
        getPaymasterDataSignerOverTcp: rpcLoad(
          'getPaymasterDataSignerOverTcp',
          apiSignerOverTcp.url,
          '/v1/paymaster/rpc',
          clientHeaders,
          signedBodies,
        ),
        getPaymasterStubData: rpcLoad(
          'getPaymasterStubData',
          api.url,
          '/v1/paymaster/rpc',
          clientHeaders,
          stubBodies,
        ),
        health: { url: `${api.url}/health`, ...LOAD },
      },
      ROUNDS,
    );
    const signOnlyFigures = figures.signOnly;
    const signAndInsertFigures = figures.signAndInsert;
    const dataFigures = figures.getPaymasterData;
    const dataOverTcpFigures = figures.getPaymasterDataSignerOverTcp;
    const stubFigures = figures.getPaymasterStubData;
    const healthFigures = figures.health;
    const sum = (list: RpcLoadFigures[], pick: (figures: RpcLoadFigures) => number) =>
      list.reduce((total, figures) => total + pick(figures), 0);
    const jsonRpcErrors = Object.fromEntries(
      Object.entries(rpcRounds).map(([name, list]) => [name, sum(list, (figures) => figures.jsonRpcErrors)]),
    ) as Record<keyof typeof rpcRounds, number>;
    const firstJsonRpcError = Object.fromEntries(
      Object.entries(rpcRounds).map(([name, list]) => [
        name,
        list.find((figures) => figures.firstJsonRpcError)?.firstJsonRpcError,
      ]),
    );

    // Every signed answer has its usage row. Requests in flight when a run's clock stops are still
    // answered and recorded, but autocannon no longer counts them: up to CONNECTIONS per run.
    await delay(200);
    const usageRows = (await countSubmittedUsageRows(db, clientId)) - usageRowsBefore;
    // Both apis record usage rows for the same client.
    const signedAnswers =
      sum(rpcRounds.getPaymasterData, (figures) => figures.resultsIncludingWarmUp) +
      sum(rpcRounds.getPaymasterDataSignerOverTcp, (figures) => figures.resultsIncludingWarmUp);
    const runs = (rpcRounds.getPaymasterData.length + rpcRounds.getPaymasterDataSignerOverTcp.length) * 2;
    const usageRowsMatch = usageRows >= signedAnswers && usageRows <= signedAnswers + runs * CONNECTIONS;
    // The same check for the durable baseline: every answer it gave has its row.
    const insertedRows = (await countSignedAnswerRows(db)) - insertedRowsBefore;
    const insertedAnswers = sum(rpcRounds.signAndInsert, (figures) => figures.resultsIncludingWarmUp);
    const insertedRowsMatch =
      insertedRows >= insertedAnswers && insertedRows <= insertedAnswers + runs * CONNECTIONS;
    const machineAtEnd = machineLoad();

    process.stdout.write(
      `\n  ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_SEC} s after a 1 s warm-up each\n`,
    );
    printFigures('baseline: Koa hash + sign (signOnly.ts)', {
      ...signOnlyFigures,
      jsonRpcErrors: jsonRpcErrors.signOnly,
    });
    printFigures('baseline (info): sign + 1 durable INSERT', {
      ...signAndInsertFigures,
      jsonRpcErrors: jsonRpcErrors.signAndInsert,
    });
    printFigures('subject: pm_getPaymasterData (api→signer socket)', {
      ...dataFigures,
      jsonRpcErrors: jsonRpcErrors.getPaymasterData,
    });
    printFigures('information: the same, signer over TCP', {
      ...dataOverTcpFigures,
      jsonRpcErrors: jsonRpcErrors.getPaymasterDataSignerOverTcp,
    });
    printFigures('subject: pm_getPaymasterStubData (api)', {
      ...stubFigures,
      jsonRpcErrors: jsonRpcErrors.getPaymasterStubData,
    });
    printFigures('baseline: GET /health (same api)', healthFigures);
    process.stdout.write(
      `  usage rows 'submitted' during the pm_getPaymasterData runs: ${usageRows} for ${signedAnswers} signed answers counted (${usageRowsMatch ? 'consistent' : 'INCONSISTENT'})\n` +
        `  rows inserted by the sign + INSERT baseline: ${insertedRows} for ${insertedAnswers} answers counted (${insertedRowsMatch ? 'consistent' : 'INCONSISTENT'})\n` +
        `  machine load average ${machineAtStart.loadAverage1m.toFixed(2)} → ${machineAtEnd.loadAverage1m.toFixed(2)} on ${machineAtStart.cpus} cores\n`,
    );
    for (const [label, first] of Object.entries(firstJsonRpcError)) {
      if (first) process.stdout.write(`  first JSON-RPC error (${label}): ${first}\n`);
    }

    const throughputRatio = ratio(dataFigures.requestsPerSec, signOnlyFigures.requestsPerSec);
    const p99Ratio = ratio(dataFigures.latencyP99Ms, signOnlyFigures.latencyP99Ms);
    const durableThroughputRatio = ratio(dataFigures.requestsPerSec, signAndInsertFigures.requestsPerSec);
    const durableP99Ratio = ratio(dataFigures.latencyP99Ms, signAndInsertFigures.latencyP99Ms);
    const socketVsTcp = ratio(dataFigures.requestsPerSec, dataOverTcpFigures.requestsPerSec);
    process.stdout.write(
      `  for information: the signer on its socket vs on TCP ${socketVsTcp.toFixed(3)}× throughput, p99 ${ratio(dataFigures.latencyP99Ms, dataOverTcpFigures.latencyP99Ms).toFixed(2)}×\n` +
        `  for information: sign + 1 durable INSERT vs sign-only ${ratio(signAndInsertFigures.requestsPerSec, signOnlyFigures.requestsPerSec).toFixed(3)}×; pm_getPaymasterData vs sign + INSERT ${durableThroughputRatio.toFixed(3)}×, p99 ${durableP99Ratio.toFixed(2)}×\n`,
    );
    reportBenchmark('paymaster', {
      load: {
        connections: CONNECTIONS,
        durationSec: DURATION_SEC,
        rounds: ROUNDS,
        warmUpSec: 1,
        generator: 'autocannon',
      },
      notes: [
        'Sponsorship limits are active (generous values): every signed request is checked against the merchant per-transaction cap and consumes its limit units atomically with its usage row.',
        'Every request has a unique nonce; the first answer of each signing server is checked to recover to the verifying signer.',
        'Both signing servers sign with signer/fastAccount.ts (libsecp256k1); the signing service reads the EntryPoint deposit once per block.',
        'The loads alternate within each round (bench/lib/rounds.ts measureRounds); figures are the means of the rounds.',
      ],
      machine: { atStart: machineAtStart, atEnd: machineAtEnd, ...machine },
      signOnly: {
        server:
          'Koa, one POST route: sponsorshipHash + the signing service signer (libsecp256k1) with the signer key',
        ...signOnlyFigures,
        jsonRpcErrors: jsonRpcErrors.signOnly,
      },
      signAndInsert: {
        server:
          'the sign-only route plus one INSERT of the answer, committed in its own transaction on the same Postgres (information)',
        ...signAndInsertFigures,
        jsonRpcErrors: jsonRpcErrors.signAndInsert,
        rowsInserted: insertedRows,
        rowsConsistent: insertedRowsMatch,
      },
      getPaymasterDataSignerOverTcp: {
        server: 'the same api path with the signer on its TCP port (information: what the socket is worth)',
        ...dataOverTcpFigures,
        jsonRpcErrors: jsonRpcErrors.getPaymasterDataSignerOverTcp,
      },
      getPaymasterData: {
        server:
          'api process (client id, policy checks in Postgres) → signer process on its Unix-domain socket (deposit per block, sign) → limits + usage row',
        ...dataFigures,
        jsonRpcErrors: jsonRpcErrors.getPaymasterData,
        usageRowsSubmitted: usageRows,
        usageRowsConsistent: usageRowsMatch,
      },
      getPaymasterStubData: {
        server: 'api process, policy checks in Postgres, no signer, no usage row',
        ...stubFigures,
        jsonRpcErrors: jsonRpcErrors.getPaymasterStubData,
      },
      health: { server: 'api process, GET /health', ...healthFigures },
      wallSeconds: (performance.now() - started) / 1000,
      ratios: {
        throughputGetPaymasterDataVsSignOnly: throughputRatio,
        p99LatencyGetPaymasterDataVsSignOnly: p99Ratio,
        throughputSignAndInsertVsSignOnly: ratio(
          signAndInsertFigures.requestsPerSec,
          signOnlyFigures.requestsPerSec,
        ),
        throughputGetPaymasterDataVsSignAndInsert: durableThroughputRatio,
        p99LatencyGetPaymasterDataVsSignAndInsert: durableP99Ratio,
        throughputSignerSocketVsTcp: socketVsTcp,
        throughputStubDataVsHealth: ratio(stubFigures.requestsPerSec, healthFigures.requestsPerSec),
        p99LatencyStubDataVsHealth: ratio(stubFigures.latencyP99Ms, healthFigures.latencyP99Ms),
      },
      goals: [
        {
          label: 'pm_getPaymasterData throughput vs sign-only',
          now: throughputRatio,
          goal: { atLeast: 0.5 },
          subject: `${figure(dataFigures)} (pm_getPaymasterData, limits active)`,
          baseline: `${figure(signOnlyFigures)} (sign-only Koa route)`,
        },
        {
          label: 'pm_getPaymasterData p99 vs sign-only',
          now: p99Ratio,
          goal: { atMost: 3 },
          subject: `${figure(dataFigures)} (pm_getPaymasterData, limits active)`,
          baseline: `${figure(signOnlyFigures)} (sign-only Koa route)`,
        },
      ],
    });
    const failures =
      Object.values(jsonRpcErrors).reduce((total, count) => total + count, 0) +
      signOnlyFigures.non2xx +
      signOnlyFigures.errors +
      signAndInsertFigures.non2xx +
      signAndInsertFigures.errors +
      dataFigures.non2xx +
      dataFigures.errors +
      dataOverTcpFigures.non2xx +
      dataOverTcpFigures.errors +
      stubFigures.non2xx +
      stubFigures.errors +
      healthFigures.non2xx +
      healthFigures.errors;
    if (failures > 0 || !usageRowsMatch || !insertedRowsMatch) {
      process.stdout.write(
        `  FAILED: ${failures} failed requests${usageRowsMatch ? '' : ', usage rows inconsistent'}${insertedRowsMatch ? '' : ', baseline rows inconsistent'}\n`,
      );
      process.exitCode = 1;
    }
    process.stdout.write(`  wall time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
