import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import autocannon from 'autocannon';
import {
  type Address,
  type Hex,
  encodeFunctionData,
  getAddress,
  numberToHex,
  parseAbi,
  recoverMessageAddress,
} from 'viem';
import { LOCAL_PAYMASTER_SIGNER } from '../chain/deployLocalChain';
import { ENTRY_POINT_V08_ADDRESS } from '../chain/entryPoints';
import { decodePaymasterData, sponsorshipHash, type SponsorshipTerms } from '../chain/paymasterData';
import { createDb, type Db } from '../db/client';
import { upsertMerchantByWallet } from '../db/merchants';
import { insertPaymasterClient } from '../db/paymasterClients';
import { upsertAllowlistEntry } from '../db/paymasterPolicies';
import { generateClientId } from '../paymaster/clientIds';
import { measureLoad } from './lib/load';
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
 * send them. Sponsorship limits are active: every signed request consumes its sender's hourly op
 * and daily USD units and the platform budget (set high enough here that none refuses).
 */

const CONNECTIONS = 32;
const DURATION_SEC = 10;
const CHAIN_ID = 84532;
/** The merchant's allowlisted contract, the single call target of every benchmarked operation. */
const TARGET: Address = '0x1000000000000000000000000000000000000b01';
const SENDER: Address = '0x4000000000000000000000000000000000000b02';

const callData: Hex = encodeFunctionData({
  abi: parseAbi(['function execute(address dest, uint256 value, bytes func)']),
  functionName: 'execute',
  args: [TARGET, 0n, '0xd09de08a'],
});
const userOpFields = {
  sender: SENDER,
  callData,
  callGasLimit: '0x30000',
  verificationGasLimit: '0x30000',
  preVerificationGas: '0x10000',
  maxFeePerGas: '0x77359400',
  maxPriorityFeePerGas: '0x3b9aca00',
  signature: '0x',
} as const;

/** Unique across every request of the run (warm-ups and verification included). */
let nextNonce = 1n;

/** JSON-RPC bodies for `method` over the benchmark operation, each with the next nonce. */
function rpcBodies(method: string): () => string {
  const placeholder = '"__NONCE__"';
  const template = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: [{ ...userOpFields, nonce: '__NONCE__' }, ENTRY_POINT_V08_ADDRESS, numberToHex(CHAIN_ID)],
  });
  const [prefix, suffix] = template.split(placeholder) as [string, string];
  return () => `${prefix}"${numberToHex(nextNonce++)}"${suffix}`;
}

interface PaymasterResult {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: Hex;
  paymasterPostOpGasLimit: Hex;
}

/** The paymaster result in a JSON-RPC answer, or undefined for an error or anything else. */
function paymasterResultOf(text: string): PaymasterResult | undefined {
  try {
    const result = (JSON.parse(text) as { result?: Partial<PaymasterResult> }).result;
    return typeof result?.paymasterData === 'string' && result.paymasterData.startsWith('0x')
      ? (result as PaymasterResult)
      : undefined;
  } catch {
    return undefined;
  }
}

interface RpcLoadFigures {
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** HTTP 200 answers without a paymaster result (JSON-RPC errors). */
  jsonRpcErrors: number;
  firstJsonRpcError?: string;
  /** Answers carrying paymaster data, warm-up included (the usage-row cross-check counts these). */
  resultsIncludingWarmUp: number;
}

/**
 * measureLoad's protocol (1 s warm-up, then DURATION_SEC at CONNECTIONS) for POSTs whose bodies vary
 * per request, counting every HTTP 200 that carries a JSON-RPC error instead of paymaster data.
 */
async function measureRpcLoad({
  url,
  path,
  headers,
  nextBody,
}: {
  url: string;
  path: string;
  headers: Record<string, string>;
  nextBody: () => string;
}): Promise<RpcLoadFigures> {
  let jsonRpcErrors = 0;
  let results = 0;
  let firstJsonRpcError: string | undefined;
  const run = (duration: number) =>
    autocannon({
      url,
      connections: CONNECTIONS,
      duration,
      requests: [
        {
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json', ...headers },
          setupRequest: (request) => ({ ...request, body: nextBody() }),
          onResponse: (status, body) => {
            if (status !== 200) return;
            if (paymasterResultOf(body)) {
              results += 1;
            } else {
              jsonRpcErrors += 1;
              firstJsonRpcError ??= body.slice(0, 300);
            }
          },
        },
      ],
    });
  await run(1);
  jsonRpcErrors = 0;
  firstJsonRpcError = undefined;
  const result = await run(DURATION_SEC);
  return {
    requestsPerSec: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    jsonRpcErrors,
    ...(firstJsonRpcError !== undefined && { firstJsonRpcError }),
    resultsIncludingWarmUp: results,
  };
}

/** One request before the load: it must answer paymaster data signed by the paymasters' verifying signer. */
async function expectSignedResult(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<PaymasterResult> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  const result = paymasterResultOf(text);
  if (response.status !== 200 || !result)
    throw new Error(`${url} answered ${response.status} without paymaster data: ${text}`);
  const decoded = decodePaymasterData(result.paymasterData);
  if (!decoded || decoded.mode !== 'sponsored')
    throw new Error(`${url} answered undecodable paymaster data: ${text}`);
  const { signature, ...terms } = decoded;
  const { params } = JSON.parse(body) as { params: [{ nonce: Hex }] };
  const hash = sponsorshipHash({
    chainId: CHAIN_ID,
    paymaster: result.paymaster,
    terms: terms as SponsorshipTerms,
    userOperation: {
      sender: SENDER,
      nonce: BigInt(params[0].nonce),
      callData,
      callGasLimit: BigInt(userOpFields.callGasLimit),
      verificationGasLimit: BigInt(userOpFields.verificationGasLimit),
      preVerificationGas: BigInt(userOpFields.preVerificationGas),
      maxFeePerGas: BigInt(userOpFields.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(userOpFields.maxPriorityFeePerGas),
      paymasterVerificationGasLimit: BigInt(result.paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: BigInt(result.paymasterPostOpGasLimit),
    },
  });
  const signer = await recoverMessageAddress({ message: { raw: hash }, signature });
  if (signer !== LOCAL_PAYMASTER_SIGNER.address)
    throw new Error(
      `${url}: paymaster data signed by ${signer}, not the verifying signer ${LOCAL_PAYMASTER_SIGNER.address}`,
    );
  return result;
}

/** A merchant with a sponsored `pmc_test_` client for the chain and the target on its allowlist. */
async function seedMerchant(db: Db): Promise<{ clientId: string }> {
  const wallet = getAddress(`0x${randomBytes(20).toString('hex')}`);
  const merchant = await upsertMerchantByWallet(db, { walletAddress: wallet, payoutAddress: wallet });
  const client = await insertPaymasterClient(db, {
    merchantId: merchant.id,
    clientId: generateClientId('test'),
    environment: 'test',
    label: 'paymaster bench',
    allowedOrigins: [],
    allowedChainIds: [CHAIN_ID],
    gasMode: 'sponsored',
  });
  await upsertAllowlistEntry(db, {
    merchantId: merchant.id,
    chainId: CHAIN_ID,
    contractAddress: TARGET.toLowerCase(),
    label: 'bench target',
  });
  return { clientId: client.client_id };
}

async function countSubmittedUsageRows(db: Db, clientId: string): Promise<number> {
  const { count } = await db
    .selectFrom('paymaster_usage')
    .where('client_id', '=', clientId)
    .where('status', '=', 'submitted')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}

const ratio = (subject: number, baseline: number) => subject / Math.max(baseline, 0.001);

function printFigures(
  label: string,
  figures: {
    requestsPerSec: number;
    latencyP50Ms: number;
    latencyP99Ms: number;
    non2xx: number;
    errors: number;
    jsonRpcErrors?: number;
  },
) {
  const failures = `non2xx ${figures.non2xx}, errors ${figures.errors}${figures.jsonRpcErrors === undefined ? '' : `, JSON-RPC errors ${figures.jsonRpcErrors}`}`;
  process.stdout.write(
    `  ${label.padEnd(44)} ${figures.requestsPerSec.toFixed(0).padStart(6)} req/s  p50 ${figures.latencyP50Ms} ms  p99 ${figures.latencyP99Ms} ms  (${failures})\n`,
  );
}

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
    const { clientId } = await seedMerchant(db);
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
        // One sender sends every request: limits stay active but generous enough never to refuse.
        PAYMASTER_PLATFORM_PER_SENDER_HOURLY_OPS: '1000000',
        PAYMASTER_PLATFORM_PER_SENDER_DAILY_USD: '100000000',
        PAYMASTER_PLATFORM_DAILY_BUDGET_USD: '100000000',
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
        'Sponsorship limits are active (generous values): every signed request consumes its limit units atomically.',
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
