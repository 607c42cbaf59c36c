import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { ethUsdDecimalToAnswer } from '../money/usdPriceAnswers';
import { createDb, type Db } from '../db/client';
import { weiToMicroUsd } from '../money/gasPricing';
import { usdToMicro } from '../money/microUsd';
import {
  MERCHANT_PER_TX_CAP_USD,
  SENDER,
  countSubmittedUsageRows,
  expectSignedResult,
  GENEROUS_PAYMASTER_LIMITS,
  insertSponsoredClient,
  measureRpcLoad,
  printFigures,
  rpcBodies,
  seedSponsoringMerchant,
  type RpcLoadFigures,
} from './lib/paymasterRpc';
import { reportBenchmark } from './lib/results';
import { machineLoad } from './lib/rounds';
import { startBenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';

/**
 * What exact accounting costs (issue 8): `pm_getPaymasterData` through the full api process with
 * every sponsorship limit active — the merchant's per-transaction cap (priced from the chain's
 * ETH/USD feed), the platform daily budget, the per-sender daily USD cap and the per-sender hourly
 * operation limit, all consumed in one statement per request — against the same app whose limits
 * admit everything (bench/targets/apiWithoutLimits.ts: no merchant-limits read, no price read, no
 * counters). Both apps call the same signing-service process and write their usage rows to the same
 * Postgres; one load generator, same settings; the two alternate over ROUNDS (order swapped every
 * round) after a discarded settling round.
 *
 * Every limit is generous (none refuses); the run fails when any request was answered otherwise
 * than with paymaster data, and when the counters do not add up exactly to the usage rows.
 */

const CONNECTIONS = 32;
const DURATION_SEC = 10;
const ROUNDS = 4;
const LOAD = { connections: CONNECTIONS, durationSec: DURATION_SEC };

type Variant = 'withLimits' | 'withoutLimits';
const VARIANTS: Variant[] = ['withoutLimits', 'withLimits'];

interface VariantFigures {
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  jsonRpcErrors: number;
  /** Answers carrying paymaster data in every load of this variant, warm-ups and settling included. */
  signedAnswers: number;
  firstJsonRpcError?: string;
  rounds: RpcLoadFigures[];
}

/** Means over the measured rounds (p99 too: a mean of per-round p99s); failures over every load. */
function summarise(rounds: RpcLoadFigures[], settling: RpcLoadFigures): VariantFigures {
  const all = [settling, ...rounds];
  const mean = (pick: (figures: RpcLoadFigures) => number) =>
    rounds.reduce((total, figures) => total + pick(figures), 0) / rounds.length;
  const total = (pick: (figures: RpcLoadFigures) => number) =>
    all.reduce((sum, figures) => sum + pick(figures), 0);
  const firstJsonRpcError = all.find((figures) => figures.firstJsonRpcError)?.firstJsonRpcError;
  return {
    requestsPerSec: mean((figures) => figures.requestsPerSec),
    latencyP50Ms: mean((figures) => figures.latencyP50Ms),
    latencyP99Ms: mean((figures) => figures.latencyP99Ms),
    non2xx: total((figures) => figures.non2xx),
    errors: total((figures) => figures.errors),
    timeouts: total((figures) => figures.timeouts),
    jsonRpcErrors: total((figures) => figures.jsonRpcErrors),
    signedAnswers: total((figures) => figures.resultsIncludingWarmUp),
    ...(firstJsonRpcError !== undefined && { firstJsonRpcError }),
    rounds,
  };
}

/** A counter's use over all its windows (a run may cross an hour or a day): consumed plus held (nothing is included). */
async function counterTotal(db: Db, key: string): Promise<bigint> {
  const { used, held } = await db
    .selectFrom('paymaster_limit_counters')
    .where('counter_key', '=', key)
    .select((eb) => [
      eb.fn.sum<string | null>('used').as('used'),
      eb.fn.sum<string | null>('held').as('held'),
    ])
    .executeTakeFirstOrThrow();
  return BigInt(used ?? 0) + BigInt(held ?? 0);
}

interface AccountingCheck {
  /** Expected from the with-limits usage rows vs what the counters hold. */
  senderOps: { expected: string; counted: string };
  senderUsdMicro: { expected: string; counted: string };
  platformBudgetMicro: { expected: string; counted: string };
  /** The estimated cost plus markup of the benchmarked operation, as the with-limits api priced it. */
  pricedCostsUsd: string[];
  /** Usage rows of the without-limits api carrying a USD snapshot: it must have priced nothing. */
  pricedRowsWithoutLimits: number;
  problems: string[];
}

/**
 * The counters hold exactly what the with-limits api's signed operations consumed: one op each, their
 * estimated cost plus markup for the sender, their cost without markup for the platform budget; and
 * the without-limits api priced nothing. Keys as paymaster/limits/limits.ts writes them.
 */
async function checkAccounting(
  db: Db,
  {
    merchantId,
    withLimitsClient,
    withoutLimitsClient,
  }: { merchantId: string; withLimitsClient: string; withoutLimitsClient: string },
): Promise<AccountingCheck> {
  const groups = await db
    .selectFrom('paymaster_usage')
    .where('client_id', '=', withLimitsClient)
    .where('status', '=', 'submitted')
    .select((eb) => [
      'eth_usd_price',
      'estimated_gas_cost_wei',
      'estimated_cost_usd',
      eb.fn.countAll<string>().as('count'),
    ])
    .groupBy(['eth_usd_price', 'estimated_gas_cost_wei', 'estimated_cost_usd'])
    .execute();
  const problems: string[] = [];
  let ops = 0n;
  let senderUsd = 0n;
  let budget = 0n;
  for (const group of groups) {
    const count = BigInt(group.count);
    ops += count;
    if (!group.eth_usd_price || !group.estimated_gas_cost_wei || !group.estimated_cost_usd) {
      problems.push(`${count} with-limits usage rows carry no USD snapshot`);
      continue;
    }
    senderUsd += count * usdToMicro(group.estimated_cost_usd);
    budget +=
      count * weiToMicroUsd(BigInt(group.estimated_gas_cost_wei), ethUsdDecimalToAnswer(group.eth_usd_price));
  }
  const sender = SENDER.toLowerCase();
  const counted = {
    ops: await counterTotal(db, `sender_ops:${merchantId}:${sender}`),
    senderUsd: await counterTotal(db, `sender_usd:${merchantId}:${sender}`),
    budget: await counterTotal(db, 'platform_budget_usd:testnet'),
  };
  if (counted.ops !== ops) problems.push(`sender op counter ${counted.ops} ≠ ${ops} signed operations`);
  if (counted.senderUsd !== senderUsd)
    problems.push(`sender USD counter ${counted.senderUsd} ≠ ${senderUsd} micro-USD in the usage rows`);
  if (counted.budget !== budget)
    problems.push(`platform budget counter ${counted.budget} ≠ ${budget} micro-USD in the usage rows`);
  const { priced } = await db
    .selectFrom('paymaster_usage')
    .where('client_id', '=', withoutLimitsClient)
    .where('estimated_cost_usd', 'is not', null)
    .select((eb) => eb.fn.countAll<string>().as('priced'))
    .executeTakeFirstOrThrow();
  if (Number(priced) > 0) problems.push(`${priced} usage rows of the without-limits api were priced`);
  return {
    senderOps: { expected: ops.toString(), counted: counted.ops.toString() },
    senderUsdMicro: { expected: senderUsd.toString(), counted: counted.senderUsd.toString() },
    platformBudgetMicro: { expected: budget.toString(), counted: counted.budget.toString() },
    pricedCostsUsd: groups.flatMap((group) => (group.estimated_cost_usd ? [group.estimated_cost_usd] : [])),
    pricedRowsWithoutLimits: Number(priced),
    problems,
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  const machineAtStart = machineLoad();
  const targets: BenchTarget[] = [];
  const services = await startBenchServices({ chains: true });
  const db = createDb({ connectionString: services.databaseUrl, maxConnections: 2 });
  try {
    const { merchantId, clientId: withLimitsClient } = await seedSponsoringMerchant(db);
    // A second client of the same merchant, so each api's usage rows can be told apart; the limits
    // are the merchant's and the sender's, whichever client sends.
    const withoutLimitsClient = await insertSponsoredClient(db, merchantId, 'paymaster bench, no limits');

    const sharedSecret = randomBytes(32).toString('hex');
    const signer = await startTarget('signer.ts', [], {
      ...services.env,
      SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
      SIGNER_SHARED_SECRET: sharedSecret,
      LOG_LEVEL: 'info',
    });
    targets.push(signer);
    const apiEnv = {
      ...services.env,
      LOG_LEVEL: 'info',
      SIGNER_URL: signer.url,
      SIGNER_SHARED_SECRET: sharedSecret,
      // One sender sends every request: its counters are hot rows, as the platform budget's always is.
      ...GENEROUS_PAYMASTER_LIMITS,
    };
    const withLimits = await startTarget('api.ts', [], apiEnv);
    targets.push(withLimits);
    const withoutLimits = await startTarget('apiWithoutLimits.ts', [], apiEnv);
    targets.push(withoutLimits);

    const path = '/v1/paymaster/rpc';
    const bodies = rpcBodies('pm_getPaymasterData');
    const loads: Record<Variant, Parameters<typeof measureRpcLoad>[0]> = {
      withLimits: {
        url: withLimits.url,
        path,
        headers: { 'x-client-id': withLimitsClient },
        nextBody: bodies,
        ...LOAD,
      },
      withoutLimits: {
        url: withoutLimits.url,
        path,
        headers: { 'x-client-id': withoutLimitsClient },
        nextBody: bodies,
        ...LOAD,
      },
    };
    const checked = await Promise.all(
      VARIANTS.map((variant) =>
        expectSignedResult(`${loads[variant].url}${path}`, loads[variant].headers, bodies()),
      ),
    );
    if (checked[0]!.paymaster !== checked[1]!.paymaster)
      throw new Error(
        `the two apps sign for different paymasters: ${checked.map((r) => r.paymaster).join(', ')}`,
      );

    // Right after start every load runs far slower for a while (rounds.ts): one settling round, discarded.
    const settling = {} as Record<Variant, RpcLoadFigures>;
    for (const variant of VARIANTS) settling[variant] = await measureRpcLoad(loads[variant]);
    const rounds: Record<Variant, RpcLoadFigures[]> = { withLimits: [], withoutLimits: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // Swapping the order each round keeps a slow drift of the machine from favouring either side.
      const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order) rounds[variant].push(await measureRpcLoad(loads[variant]));
    }
    const machineAtEnd = machineLoad();
    const subject = summarise(rounds.withLimits, settling.withLimits);
    const baseline = summarise(rounds.withoutLimits, settling.withoutLimits);

    // Requests in flight when a load's clock stops are still answered and recorded after it.
    await delay(500);
    const accounting = await checkAccounting(db, { merchantId, withLimitsClient, withoutLimitsClient });
    // Each load may leave up to CONNECTIONS answered but uncounted (warm-up and measured run); +1 for
    // the signature check before the load.
    const slack = 2 * CONNECTIONS * (ROUNDS + 1) + 1;
    const usageRows = {
      withLimits: await countSubmittedUsageRows(db, withLimitsClient),
      withoutLimits: await countSubmittedUsageRows(db, withoutLimitsClient),
    };
    const problems = [...accounting.problems];
    for (const variant of VARIANTS) {
      const figures = variant === 'withLimits' ? subject : baseline;
      const failed = figures.non2xx + figures.errors + figures.timeouts + figures.jsonRpcErrors;
      if (failed > 0)
        problems.push(
          `${variant}: ${figures.non2xx} non-2xx, ${figures.errors} errors, ${figures.timeouts} timeouts, ${figures.jsonRpcErrors} JSON-RPC errors${figures.firstJsonRpcError ? ` (first: ${figures.firstJsonRpcError})` : ''}`,
        );
      const rows = usageRows[variant];
      if (rows < figures.signedAnswers || rows > figures.signedAnswers + slack)
        problems.push(`${variant}: ${rows} usage rows for ${figures.signedAnswers} signed answers counted`);
    }

    process.stdout.write(
      `\n  ${CONNECTIONS} connections, ${DURATION_SEC} s per load after a 1 s warm-up; 1 settling round, then ${ROUNDS} alternating rounds\n`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      printFigures(`round ${round + 1}: without limits`, rounds.withoutLimits[round]!);
      printFigures(`round ${round + 1}: with limits`, rounds.withLimits[round]!);
    }
    printFigures('mean: without limits (apiWithoutLimits.ts)', baseline);
    printFigures('mean: with limits (api.ts)', subject);
    process.stdout.write(
      `  priced at ${accounting.pricedCostsUsd.join(', ')} USD per operation (merchant cap ${MERCHANT_PER_TX_CAP_USD} USD); ` +
        `counters: ${accounting.senderOps.counted} ops, ${accounting.senderUsdMicro.counted} sender micro-USD, ` +
        `${accounting.platformBudgetMicro.counted} budget micro-USD (expected ${accounting.senderOps.expected}, ` +
        `${accounting.senderUsdMicro.expected}, ${accounting.platformBudgetMicro.expected})\n`,
    );
    process.stdout.write(
      `  load average ${machineAtStart.loadAverage1m.toFixed(2)} at start, ${machineAtEnd.loadAverage1m.toFixed(2)} at end (${machineAtStart.cpus} cores)\n`,
    );
    if (problems.length > 0) {
      throw new Error(`paymasterLimits benchmark invalid:\n  ${problems.join('\n  ')}`);
    }

    reportBenchmark('paymasterLimits', {
      method: 'pm_getPaymasterData',
      load: {
        ...LOAD,
        warmUpSec: 1,
        generator: 'autocannon',
        rounds: ROUNDS,
        order:
          'one settling round discarded, then the two alternate, order swapped each round; top-level figures are means over rounds',
      },
      machine: { atStart: machineAtStart, atEnd: machineAtEnd },
      notes: [
        'Both apps: client id, policy checks in Postgres, signer process (deposit read, sign), usage row.',
        `With limits: merchant limits read, ETH/USD price read from anvil, merchant per-tx cap ${MERCHANT_PER_TX_CAP_USD} USD, one statement (consume_paymaster_limit_counters) consuming the platform budget, the sender's daily USD and hourly op counters (one sender: hot rows).`,
        'Without limits: limits admit everything; no price read, no counters; usage rows carry no USD snapshot.',
        'Zero non-2xx, errors, timeouts and JSON-RPC errors in every load; counters equal the usage rows exactly.',
      ],
      withoutLimits: {
        server: 'api process, createApp with sponsorshipLimits admitting everything (apiWithoutLimits.ts)',
        ...baseline,
        usageRowsSubmitted: usageRows.withoutLimits,
      },
      withLimits: {
        server: 'api process, production createApp (api.ts)',
        ...subject,
        usageRowsSubmitted: usageRows.withLimits,
      },
      accounting,
      wallSeconds: (performance.now() - started) / 1000,
      ratios: {
        throughputWithLimitsVsWithout: subject.requestsPerSec / baseline.requestsPerSec,
        p99LatencyWithLimitsVsWithout: subject.latencyP99Ms / Math.max(baseline.latencyP99Ms, 0.001),
        p50LatencyWithLimitsVsWithout: subject.latencyP50Ms / Math.max(baseline.latencyP50Ms, 0.001),
      },
    });
    process.stdout.write(`  wall time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    for (const target of targets.reverse()) await target.stop().catch(() => undefined);
    // pg's pool resolves end() before every socket is gone; Postgres stopping meanwhile kills the process.
    await db.destroy().then(() => delay(300));
    await services.stop();
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
