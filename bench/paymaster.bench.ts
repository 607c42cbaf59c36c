import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { createDb } from '../db/client';
import { measureLoad } from './lib/load';
import {
  countSubmittedUsageRows,
  expectSignedResult,
  measureRpcLoad,
  paymasterResultOf,
  printFigures,
  rpcBodies,
  seedSponsoringMerchant,
} from './lib/paymasterRpc';
import { reportBenchmark } from './lib/results';
import { startBenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';

/**
 * Issue 7's paymaster benchmarks, ratios from one run with one load generator (autocannon, 32
 * connections) against servers in their own processes:
 *
 * 1. `pm_getPaymasterData` through the real api process (client id → policy checks in Postgres →
 *    signing service process over HTTP, which reads the paymaster's EntryPoint deposit from anvil →
 *    usage row) vs bench/targets/signOnly.ts, a Koa route that only computes the same sponsorship
 *    hash for the same operation and signs it with the same key (the floor of a signature over HTTP).
 * 2. `pm_getPaymasterStubData` vs `/health` on the same api process.
 *
 * Every request carries a fresh nonce, so each signature is over a distinct operation, as wallets
 * send them. Sponsorship limits are active: every signed request is priced against the merchant's
 * per-transaction cap and consumes its sender's hourly op and daily USD units and the platform
 * budget (all set high enough here that none refuses). bench/paymasterLimits.bench.ts measures what
 * they cost.
 */

const CONNECTIONS = 32;
const DURATION_SEC = 10;
const LOAD = { connections: CONNECTIONS, durationSec: DURATION_SEC };

const ratio = (subject: number, baseline: number) => subject / Math.max(baseline, 0.001);

async function main(): Promise<void> {
  const started = performance.now();
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

    // 1a. Baseline: hash and sign over HTTP, nothing else.
    const signOnly = stopLater(await startTarget('signOnly.ts', [], { ...services.env, ...signerEnv }));
    const signedBodies = rpcBodies('pm_getPaymasterData');
    const baselineResult = await expectSignedResult(`${signOnly.url}/sign`, {}, signedBodies());
    const signOnlyFigures = await measureRpcLoad({
      url: signOnly.url,
      path: '/sign',
      headers: {},
      nextBody: signedBodies,
      ...LOAD,
    });
    await signOnly.stop();
    cleanups.shift();

    // The real path: signing service and api, each in its own process.
    const sharedSecret = randomBytes(32).toString('hex');
    const signer = stopLater(
      await startTarget('signer.ts', [], {
        ...services.env,
        ...signerEnv,
        SIGNER_SHARED_SECRET: sharedSecret,
      }),
    );
    const api = stopLater(
      await startTarget('api.ts', [], {
        ...services.env,
        LOG_LEVEL: 'info',
        SIGNER_URL: signer.url,
        SIGNER_SHARED_SECRET: sharedSecret,
        // One sender sends every request: limits stay active but generous enough never to refuse
        // (the bench's benchmark chain is a testnet: its budget and the merchant's share of it too;
        // holds count until validUntil, so a run holds every operation it signed).
        PAYMASTER_PLATFORM_PER_SENDER_HOURLY_OPS: '1000000',
        PAYMASTER_PLATFORM_PER_SENDER_DAILY_USD: '100000000',
        PAYMASTER_PLATFORM_DAILY_BUDGET_USD: '100000000',
        PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: '100000000',
        PAYMASTER_PLATFORM_PER_MERCHANT_DAILY_USD: '100000000',
        PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000',
        // The client's request rate limit is not what this bench measures.
        PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: '10000000',
      }),
    );
    const rpcUrl = `${api.url}/v1/paymaster/rpc`;
    const clientHeaders = { 'x-client-id': clientId };

    // 1b. Subject: pm_getPaymasterData through the api, policy, Postgres, signer and usage row.
    const subjectResult = await expectSignedResult(rpcUrl, clientHeaders, signedBodies());
    if (subjectResult.paymaster !== baselineResult.paymaster)
      throw new Error(
        `baseline signs for ${baselineResult.paymaster}, the api for ${subjectResult.paymaster}`,
      );
    const usageRowsBefore = await countSubmittedUsageRows(db, clientId);
    const dataFigures = await measureRpcLoad({
      url: api.url,
      path: '/v1/paymaster/rpc',
      headers: clientHeaders,
      nextBody: signedBodies,
      ...LOAD,
    });

    // 2. pm_getPaymasterStubData vs /health, same api process.
    const stubBodies = rpcBodies('pm_getPaymasterStubData');
    const stubCheck = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...clientHeaders },
      body: stubBodies(),
    });
    const stubText = await stubCheck.text();
    if (stubCheck.status !== 200 || !paymasterResultOf(stubText))
      throw new Error(`stub data answered ${stubCheck.status}: ${stubText}`);
    const stubFigures = await measureRpcLoad({
      url: api.url,
      path: '/v1/paymaster/rpc',
      headers: clientHeaders,
      nextBody: stubBodies,
      ...LOAD,
    });
    const healthFigures = await measureLoad({
      url: `${api.url}/health`,
      connections: CONNECTIONS,
      durationSec: DURATION_SEC,
    });

    // Every signed answer has its usage row. Requests in flight when a run's clock stops are still
    // answered and recorded, but autocannon no longer counts them: up to CONNECTIONS per run (warm-up, measured).
    await delay(200);
    const usageRows = (await countSubmittedUsageRows(db, clientId)) - usageRowsBefore;
    const signedAnswers = dataFigures.resultsIncludingWarmUp;
    const usageRowsMatch = usageRows >= signedAnswers && usageRows <= signedAnswers + 2 * CONNECTIONS;

    process.stdout.write(`\n  ${CONNECTIONS} connections, ${DURATION_SEC} s each after a 1 s warm-up\n`);
    printFigures('baseline: Koa hash + sign (signOnly.ts)', signOnlyFigures);
    printFigures('subject: pm_getPaymasterData (api→signer)', dataFigures);
    printFigures('subject: pm_getPaymasterStubData (api)', stubFigures);
    printFigures('baseline: GET /health (same api)', healthFigures);
    process.stdout.write(
      `  usage rows 'submitted' during the pm_getPaymasterData runs: ${usageRows} for ${signedAnswers} signed answers counted (${usageRowsMatch ? 'consistent' : 'INCONSISTENT'})\n`,
    );
    for (const [label, figures] of [
      ['signOnly', signOnlyFigures],
      ['pm_getPaymasterData', dataFigures],
      ['pm_getPaymasterStubData', stubFigures],
    ] as const) {
      if (figures.firstJsonRpcError)
        process.stdout.write(`  first JSON-RPC error (${label}): ${figures.firstJsonRpcError}\n`);
    }

    reportBenchmark('paymaster', {
      load: { connections: CONNECTIONS, durationSec: DURATION_SEC, warmUpSec: 1, generator: 'autocannon' },
      notes: [
        'Sponsorship limits are active (generous values): every signed request is checked against the merchant per-transaction cap and consumes its limit units atomically.',
        'Every request has a unique nonce; the first answer of each signing server is checked to recover to the verifying signer.',
        'The signing service reads the paymaster EntryPoint deposit from the local anvil chain on every signature.',
      ],
      signOnly: {
        server: 'Koa, one POST route: sponsorshipHash + viem signMessage with the signer key',
        ...signOnlyFigures,
      },
      getPaymasterData: {
        server:
          'api process (client id, policy checks in Postgres) → signer process (deposit read, sign) → usage row',
        ...dataFigures,
        usageRowsSubmitted: usageRows,
        usageRowsConsistent: usageRowsMatch,
      },
      getPaymasterStubData: {
        server: 'api process, policy checks in Postgres, no signer, no usage row',
        ...stubFigures,
      },
      health: { server: 'api process, GET /health', ...healthFigures },
      wallSeconds: (performance.now() - started) / 1000,
      ratios: {
        throughputGetPaymasterDataVsSignOnly: ratio(
          dataFigures.requestsPerSec,
          signOnlyFigures.requestsPerSec,
        ),
        p99LatencyGetPaymasterDataVsSignOnly: ratio(dataFigures.latencyP99Ms, signOnlyFigures.latencyP99Ms),
        throughputStubDataVsHealth: ratio(stubFigures.requestsPerSec, healthFigures.requestsPerSec),
        p99LatencyStubDataVsHealth: ratio(stubFigures.latencyP99Ms, healthFigures.latencyP99Ms),
      },
    });
    const failures =
      signOnlyFigures.non2xx +
      signOnlyFigures.errors +
      signOnlyFigures.jsonRpcErrors +
      dataFigures.non2xx +
      dataFigures.errors +
      dataFigures.jsonRpcErrors +
      stubFigures.non2xx +
      stubFigures.errors +
      stubFigures.jsonRpcErrors +
      healthFigures.non2xx +
      healthFigures.errors;
    if (failures > 0 || !usageRowsMatch) {
      process.stdout.write(
        `  FAILED: ${failures} failed requests${usageRowsMatch ? '' : ', usage rows inconsistent'}\n`,
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
