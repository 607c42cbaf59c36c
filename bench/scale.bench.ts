import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { Client } from 'pg';
import { createTestClient, http, type Address, type Hex } from 'viem';
import { createChainMonitorActivities } from '../activities/chainMonitor';
import { createNetworkRegistry } from '../chain/networkRegistry';
import { networkByChainId } from '../config/networks';
import { loadConfig } from '../config';
import { MintFanout } from '../contracts/artifacts';
import { createDb } from '../db/client';
import { writeCheckpoint } from '../db/deposits';
import { ANVIL_DEV_ACCOUNTS } from '../dev/services/anvil';
import { benchWalletClient } from './lib/chainClients';
import { createSandboxSession, signUpBenchMerchant } from './lib/merchantApi';
import { percentile } from './lib/percentiles';
import { reportBenchmark } from './lib/results';
import { latencyPercentiles, runAutocannon, type AutocannonOptions, type LoadFigures } from './lib/load';
import { machineLoad, measureAtSteadyLoad, measureRounds } from './lib/rounds';
import {
  historySessionId,
  seedActiveSessions,
  seedHistory,
  seedOtherMerchants,
  type OptionTemplate,
  type ScaleSeed,
  type SeededCounts,
} from './lib/seedScale';
import { startBenchServices } from './lib/services';
import { startTarget } from './lib/target';
import { cpuSeconds, cpuSecondsWithChildren, parentOf, serverProcessOf } from './lib/procStats';
import { depositSignallerFor } from '../workflowClient/sessions';

/**
 * Cost as the work grows (issue 20): the same measurements with N = 1k, 100k and 1M rows of history in
 * every table the routes read (sessions, payment options, deposits, events, paymaster usage), seeded
 * incrementally into one database with COPY FROM STDIN and ANALYZEd after each step:
 * - session creation throughput (POST /v1/sessions with an sk_ key, workflow started);
 * - the public status route's p99 (GET /v1/sessions/{id}/status over 1,000 ids spread through the history);
 * - the paymaster activity feed's p99 at depth (a page of 50 whose cursor is 80–99 % down the merchant's
 *   history: keyset paging must not get slower as the history grows);
 * - the deposit monitor's scan rate (scanDeposits, as bench/monitorScan.bench.ts calls it) with 10,000 active
 *   deposit addresses watched, the same at every N.
 * `GET /health` runs in the same alternating rounds as a control for the machine's load. Every ratio is
 * the figure at N against the figure at 1k, in the same run. EXPLAIN (ANALYZE, BUFFERS) of each route's
 * queries is stored per N in the results.
 */
/** SCALE_STEPS=1000,20000 for a quick trial; the issue's steps otherwise. */
const STEPS: readonly number[] = process.env.SCALE_STEPS
  ? process.env.SCALE_STEPS.split(',').map(Number)
  : [1_000, 100_000, 1_000_000];
const OTHER_MERCHANTS = 1_000;
const ACTIVE_ADDRESSES = 10_000;
const ROUNDS = 2;
/**
 * With SCALE_FEED_PROFILE_DIR set, the api writes a CPU profile of the feed's first measured load at each N
 * there (api.ts.<pid>.<step>.cpuprofile): where the api's time per feed answer goes as the tables grow.
 */
const FEED_PROFILE_DIR = process.env.SCALE_FEED_PROFILE_DIR;
const LOAD = { connections: 16, durationSec: 5 };
const STATUS_SAMPLE = 1_000;
const CURSOR_SAMPLE = 200;
const FEED_LIMIT = 50;
const CHAIN_ID = 11155111;
const BLOCKS = 100;
const LOGS_PER_BLOCK = 10;
const MAX_BLOCK_RANGE = 100;
const MONITOR_PASSES = 3;
const CREATE_BODY = JSON.stringify({ amount: '19.99', merchantName: 'Bench Shop', sandboxMode: true });

type Figures = LoadFigures;

/**
 * One autocannon run over paths drawn at random from `paths` (one per request), after a 1 s warm-up;
 * latencies to the microsecond (bench/lib/load.ts). `onOk` gets the 2xx count of both runs.
 */
async function measurePaths(
  baseUrl: string,
  paths: readonly string[],
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
  onOk: (answers: number) => void = () => undefined,
): Promise<Figures> {
  const options: AutocannonOptions = {
    url: baseUrl,
    connections: LOAD.connections,
    requests: [
      {
        method: init.method ?? 'GET',
        headers: init.headers,
        body: init.body,
        setupRequest: (request) => ({ ...request, path: paths[Math.floor(Math.random() * paths.length)]! }),
      },
    ],
  };
  const warmup = await runAutocannon({ ...options, duration: 1 });
  const { result, latenciesMs } = await runAutocannon({ ...options, duration: LOAD.durationSec });
  onOk(warmup.result['2xx'] + result['2xx']);
  if (warmup.result.non2xx || warmup.result.errors)
    throw new Error(
      `warm-up of ${paths[0]}: ${warmup.result.non2xx} non-2xx, ${warmup.result.errors} errors`,
    );
  return {
    requestsPerSec: result.requests.average,
    ...latencyPercentiles(latenciesMs),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** CPU milliseconds per answered request, of the api process and of Postgres (postmaster and backends). */
interface CpuPerRequest {
  apiMs: number;
  postgresMs: number;
}

/**
 * A load measured with the CPU it cost each process: where a route's time goes as the tables grow, when its
 * statement's plan stays flat (the feed at 1M, issue 33). Read from /proc around warm-up and run alike.
 */
function withCpuSplit(
  processes: { api: number; postmaster: number },
  load: (onOk: (answers: number) => void) => Promise<Figures>,
): () => Promise<Figures & { cpuPerRequest: CpuPerRequest }> {
  return async () => {
    let answers = 0;
    const apiBefore = cpuSeconds(processes.api);
    const postgresBefore = cpuSecondsWithChildren(processes.postmaster);
    const figures = await load((count) => (answers += count));
    const perRequestMs = (seconds: number) => (seconds * 1000) / Math.max(answers, 1);
    return {
      ...figures,
      cpuPerRequest: {
        apiMs: perRequestMs(cpuSeconds(processes.api) - apiBefore),
        postgresMs: perRequestMs(cpuSecondsWithChildren(processes.postmaster) - postgresBefore),
      },
    };
  };
}

/** The mean CPU split of the kept rounds. */
function meanCpuPerRequest(figures: { rounds: Figures[] }): CpuPerRequest {
  const rounds = figures.rounds as (Figures & { cpuPerRequest: CpuPerRequest })[];
  const mean = (pick: (split: CpuPerRequest) => number) =>
    rounds.reduce((sum, round) => sum + pick(round.cpuPerRequest), 0) / rounds.length;
  return { apiMs: mean((split) => split.apiMs), postgresMs: mean((split) => split.postgresMs) };
}

/** Plan nodes that read a whole table: the curve cannot stay flat through them. */
function seqScans(plan: string): string[] {
  return [...plan.matchAll(/Seq Scan on (\w+)/g)].map((match) => match[1]!);
}

async function main(): Promise<void> {
  const machineAtStart = machineLoad();
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const services = await startBenchServices({ chains: true });
    cleanups.unshift(() => services.stop());
    const chain = services.chains.find((entry) => entry.chainId === CHAIN_ID)!;
    const api = await startTarget('api.ts', [], {
      ...services.env,
      LOG_LEVEL: 'info',
      ...(FEED_PROFILE_DIR && {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} -r ${require.resolve('./lib/cpuProfilePreload.cjs')}`,
        PROFILE_TARGETS: 'api.ts',
        PROFILE_DIR: FEED_PROFILE_DIR,
      }),
    });
    cleanups.unshift(() => api.stop());
    const pg = new Client({ connectionString: services.databaseUrl });
    await pg.connect();
    cleanups.unshift(() => pg.end());
    const {
      rows: [backend],
    } = await pg.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const processes = { api: serverProcessOf(api.pid), postmaster: parentOf(backend!.pid) };

    // The bench merchant signs up through the API (JWT for the feed, sk_ key for creation); one real
    // session gives the payment option templates (chains, networks, tokens) the seeded rows copy.
    const benchStartedAt = new Date(Date.now() - 60_000);
    const merchant = await signUpBenchMerchant(api.url);
    const {
      rows: [merchantRow],
    } = await pg.query<{ id: string }>('SELECT id FROM merchants WHERE wallet_address = $1', [
      merchant.payoutAddress.toLowerCase(),
    ]);
    const benchMerchantId = merchantRow!.id;
    const template = await createSandboxSession(api.url, merchant, { amount: '10.00' });
    const { rows: optionRows } = await pg.query<{
      chain_id: number;
      network: string;
      symbol: string;
      token_address: string;
      decimals: number;
    }>(
      'SELECT chain_id, network, symbol, token_address, decimals FROM payment_options WHERE session_id = $1 ORDER BY chain_id, symbol',
      [template.id],
    );
    const templates: OptionTemplate[] = optionRows.map((row) => ({
      chainId: row.chain_id,
      network: row.network,
      symbol: row.symbol,
      tokenAddress: row.token_address,
      decimals: row.decimals,
    }));
    const monitorTemplate = templates.find((entry) => entry.chainId === CHAIN_ID && entry.symbol === 'USDC');
    if (!monitorTemplate) throw new Error(`no USDC option on chain ${CHAIN_ID}`);

    const seedStarted = performance.now();
    const seed: ScaleSeed = {
      benchMerchant: { id: benchMerchantId, payoutAddress: merchant.payoutAddress },
      otherMerchants: await seedOtherMerchants(pg, OTHER_MERCHANTS),
      templates,
      historyStart: new Date(Date.now() - 200 * 24 * 3600_000),
    };
    const active = await seedActiveSessions(pg, seed, monitorTemplate, ACTIVE_ADDRESSES);
    const activeSeedSec = (performance.now() - seedStarted) / 1000;

    // The monitored range: BLOCKS blocks of LOGS_PER_BLOCK USDC transfers, each to a distinct active
    // deposit address, one base unit each (underpaid: recorded and totalled, no workflow to signal).
    const generator = benchWalletClient(chain.rpcUrl, CHAIN_ID, ANVIL_DEV_ACCOUNTS[1]!.privateKey);
    const fanout = (
      await generator.waitForTransactionReceipt({
        hash: await generator.deployContract({ abi: MintFanout.abi, bytecode: MintFanout.bytecode as Hex }),
      })
    ).contractAddress!;
    const firstBlock = (await generator.getBlockNumber({ cacheTime: 0 })) + 1n;
    const txHashes: Hex[] = [];
    for (let block = 0; block < BLOCKS; block++) {
      const recipients = Array.from(
        { length: LOGS_PER_BLOCK },
        (_, slot) => active[(block * LOGS_PER_BLOCK + slot) % active.length]!.depositAddress as Address,
      );
      txHashes.push(
        await generator.writeContract({
          address: fanout,
          abi: MintFanout.abi,
          functionName: 'mintEach',
          args: [chain.contracts.usdc!, recipients, recipients.map(() => 1n)],
        }),
      );
    }
    const lastBlock = (await generator.waitForTransactionReceipt({ hash: txHashes.at(-1)! })).blockNumber;
    if (lastBlock - firstBlock + 1n !== BigInt(BLOCKS))
      throw new Error(`transfers span blocks ${firstBlock}–${lastBlock}, not ${BLOCKS}`);
    await createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) }).mine({
      blocks: networkByChainId(CHAIN_ID)!.confirmations,
    });
    const expectedLogs = BLOCKS * LOGS_PER_BLOCK;

    const db = createDb({ connectionString: services.databaseUrl });
    cleanups.unshift(() => db.destroy().then(() => delay(300)));
    const connection = await Connection.connect({ address: services.temporalAddress });
    cleanups.unshift(() => connection.close());
    const temporal = new TemporalClient({ connection, namespace: services.temporalNamespace });
    const networks = createNetworkRegistry(loadConfig(services.env));
    const { scanDeposits } = createChainMonitorActivities({
      db,
      networks,
      signalDepositDetected: depositSignallerFor(temporal),
    });
    const monitorPass = async () => {
      // Sessions the API created (the template one, the create loads') would join the watched set and grow
      // it over the run: they are moved out of the watch window so every pass watches the same 10k.
      await pg.query(
        `UPDATE sessions SET expires_at = now() - interval '30 days'
          WHERE merchant_id = $1 AND created_at >= $2 AND expires_at > now() - interval '30 days'`,
        [benchMerchantId, benchStartedAt],
      );
      await pg.query('DELETE FROM deposits WHERE chain_id = $1 AND tx_hash = ANY($2::text[])', [
        CHAIN_ID,
        txHashes.map((hash) => hash.toLowerCase()),
      ]);
      const monitorId = `bench-scale-${randomUUID()}`;
      await writeCheckpoint(db, { monitorId, chainId: CHAIN_ID, block: firstBlock - 1n });
      const started = performance.now();
      let logs = 0;
      let accepted = 0;
      let watched = 0;
      for (let caughtUp = false; !caughtUp;) {
        const result = await scanDeposits({ chainId: CHAIN_ID, monitorId, maxBlockRange: MAX_BLOCK_RANGE });
        logs += result.logs;
        accepted += result.accepted;
        watched = Math.max(watched, result.watched);
        caughtUp = result.caughtUp;
      }
      const seconds = (performance.now() - started) / 1000;
      if (logs !== expectedLogs || accepted !== expectedLogs)
        throw new Error(`monitor pass saw ${logs} logs and accepted ${accepted}, not ${expectedLogs}`);
      if (watched !== ACTIVE_ADDRESSES)
        throw new Error(`monitor watched ${watched} addresses, not ${ACTIVE_ADDRESSES}`);
      const {
        rows: [recorded],
      } = await pg.query<{ count: string }>(
        'SELECT count(*) FROM deposits WHERE chain_id = $1 AND tx_hash = ANY($2::text[])',
        [CHAIN_ID, txHashes.map((hash) => hash.toLowerCase())],
      );
      if (Number(recorded!.count) !== expectedLogs)
        throw new Error(`${recorded!.count} deposit rows after a pass, not ${expectedLogs}`);
      return expectedLogs / seconds;
    };

    const createHeaders = {
      authorization: merchant.secretKeyAuthorization,
      'content-type': 'application/json',
    };
    let createdOk = 0;
    const seeded: SeededCounts = {
      sessions: 0,
      paymentOptions: 0,
      deposits: 0,
      events: 0,
      paymasterUsage: 0,
    };
    const perStep: Record<string, unknown>[] = [];
    const byStep = new Map<
      number,
      { health: Figures; create: Figures; status: Figures; feed: Figures; monitorLogsPerSec: number }
    >();
    let previous = 0;
    for (const n of STEPS) {
      const stepMachineAtStart = machineLoad();
      const seedingStarted = performance.now();
      const counts = await seedHistory(pg, seed, previous, n);
      for (const key of ['sessions', 'paymentOptions', 'deposits', 'events', 'paymasterUsage'] as const)
        seeded[key] += counts[key];
      const seedSec = (performance.now() - seedingStarted) / 1000;
      const analyzeStarted = performance.now();
      // VACUUM as autovacuum would after a bulk load: sets the visibility map (index-only scans), then statistics.
      await pg.query('VACUUM ANALYZE');
      const analyzeSec = (performance.now() - analyzeStarted) / 1000;
      previous = n;
      process.stdout.write(
        `N=${n}: seeded ${JSON.stringify(counts)} in ${seedSec.toFixed(1)} s, VACUUM ANALYZE ${analyzeSec.toFixed(1)} s\n`,
      );

      // Status: ids spread evenly over the whole history. Feed: cursors 80–99 % down the merchant's history.
      const statusPaths = Array.from(
        { length: STATUS_SAMPLE },
        (_, slot) => `/v1/sessions/${historySessionId(Math.floor((slot * n) / STATUS_SAMPLE))}/status`,
      );
      const { rows: merchantCount } = await pg.query<{ count: string }>(
        'SELECT count(*) FROM paymaster_usage WHERE merchant_id = $1',
        [benchMerchantId],
      );
      const merchantRows = Number(merchantCount[0]!.count);
      const depths = Array.from({ length: CURSOR_SAMPLE }, (_, slot) =>
        Math.max(1, Math.floor(merchantRows * (0.8 + (0.19 * slot) / CURSOR_SAMPLE))),
      );
      const { rows: cursorRows } = await pg.query<{ seq: string }>(
        `SELECT seq FROM (SELECT seq, row_number() OVER (ORDER BY seq DESC) AS position
           FROM paymaster_usage WHERE merchant_id = $1) ranked WHERE position = ANY($2::bigint[])`,
        [benchMerchantId, depths],
      );
      const feedPaths = cursorRows.map(
        (row) =>
          `/v1/merchants/me/paymaster/activity?limit=${FEED_LIMIT}&cursor=${Buffer.from(`activity:${row.seq}`).toString('base64url')}`,
      );
      const feedHeaders = { authorization: merchant.dashboardAuthorization };
      const probe = await fetch(`${api.url}${feedPaths[0]}`, { headers: feedHeaders });
      const page = (await probe.json()) as { data: unknown[]; nextCursor: string | null };
      if (probe.status !== 200 || page.data.length !== FEED_LIMIT || !page.nextCursor)
        throw new Error(`feed page at depth answered ${probe.status} with ${page.data.length} rows`);

      const countCreated = (answers: number) => (createdOk += answers);
      let feedLoads = 0;
      const { figures, machine: roundsMachine } = await measureRounds(
        {
          health: withCpuSplit(processes, (onOk) => measurePaths(api.url, ['/health'], {}, onOk)),
          create: () =>
            measurePaths(
              api.url,
              ['/v1/sessions'],
              { method: 'POST', headers: createHeaders, body: CREATE_BODY },
              countCreated,
            ),
          status: withCpuSplit(processes, (onOk) => measurePaths(api.url, statusPaths, {}, onOk)),
          feed: withCpuSplit(processes, async (onOk) => {
            // The first call is the settling round; the profile covers the first measured one.
            const profiled = FEED_PROFILE_DIR !== undefined && ++feedLoads === 2;
            if (profiled) process.kill(processes.api, 'SIGUSR2');
            const measured = await measurePaths(api.url, feedPaths, { headers: feedHeaders }, onOk);
            if (profiled) process.kill(processes.api, 'SIGUSR2');
            return measured;
          }),
        },
        ROUNDS,
      );
      const { health, create, status, feed } = figures;
      const cpuPerRequest = {
        health: meanCpuPerRequest(health),
        status: meanCpuPerRequest(status),
        feed: meanCpuPerRequest(feed),
      };
      // The monitor: one warm-up pass, then MONITOR_PASSES, each re-run if the machine's load moved.
      await monitorPass();
      const monitorRuns: number[] = [];
      const monitorLoads: unknown[] = [];
      for (let pass = 0; pass < MONITOR_PASSES; pass++) {
        const { value, load } = await measureAtSteadyLoad(monitorPass, `N=${n} monitor pass ${pass + 1}`);
        monitorRuns.push(value);
        monitorLoads.push(load);
      }
      const monitorLogsPerSec = percentile(monitorRuns, 50);
      byStep.set(n, { health, create, status, feed, monitorLogsPerSec });

      const plans = await explainAll(pg, {
        benchMerchantId,
        sessionId: historySessionId(Math.floor(n / 2)),
        cursorSeq: cursorRows[Math.floor(cursorRows.length / 2)]!.seq,
        recipients: active.slice(0, 1000).map((entry) => entry.depositAddress.toLowerCase()),
        activeSessionId: active[0]!.sessionId,
      });
      perStep.push({
        n,
        machine: {
          atStart: stepMachineAtStart,
          atEnd: machineLoad(),
          rounds: roundsMachine,
          monitorPasses: monitorLoads,
        },
        seeded: counts,
        seedSec,
        analyzeSec,
        merchantUsageRows: merchantRows,
        health,
        create,
        status,
        feed,
        cpuPerRequest,
        monitor: { logsPerSec: monitorLogsPerSec, passes: monitorRuns.map(Math.round) },
        plans,
      });
      process.stdout.write(
        `N=${n}: health ${health.requestsPerSec.toFixed(0)} req/s; create ${create.requestsPerSec.toFixed(0)} req/s; ` +
          `status p99 ${status.latencyP99Ms.toFixed(1)} ms; feed p99 ${feed.latencyP99Ms.toFixed(1)} ms ` +
          `(CPU per answer: api ${cpuPerRequest.feed.apiMs.toFixed(2)} ms, Postgres ${cpuPerRequest.feed.postgresMs.toFixed(2)} ms); ` +
          `monitor ${monitorLogsPerSec.toFixed(0)} logs/s; seq scans: ${JSON.stringify(
            Object.fromEntries(Object.entries(plans).map(([name, plan]) => [name, plan.seqScans])),
          )}\n`,
      );
    }

    // Counters equal rows: every created session is stored with its workflow started; the tables hold
    // what was seeded plus what the API created.
    const {
      rows: [created],
    } = await pg.query<{ total: string; started: string }>(
      `SELECT count(*) AS total, count(workflow_started_at) AS started FROM sessions
        WHERE merchant_id = $1 AND created_at >= $2`,
      [benchMerchantId, benchStartedAt],
    );
    // The template session and the 201s; a request still in flight when a load stopped may be stored
    // without its answer counted (at most one per connection and load run).
    const createdStored = Number(created!.total);
    // Each create load is two autocannon runs; a round may be re-run twice when the load average moved.
    const createRuns = STEPS.length * (ROUNDS * 3 + 1) * 2;
    if (
      // A start that timed out under load answers non-2xx and leaves the session to the reconciler (not
      // running here): every answered create, and the template session, has its workflow started.
      Number(created!.started) < createdOk + 1 ||
      createdStored < createdOk + 1 ||
      createdStored > createdOk + 1 + createRuns * LOAD.connections
    )
      throw new Error(
        `${createdOk} sessions answered 201, ${createdStored} stored, ${created!.started} with a started workflow`,
      );
    const tableCounts: Record<string, number> = {};
    for (const table of ['sessions', 'payment_options', 'deposits', 'events', 'paymaster_usage']) {
      const { rows } = await pg.query<{ count: string }>(`SELECT count(*) FROM ${table}`);
      tableCounts[table] = Number(rows[0]!.count);
    }
    // 1 template session + the active ones + the history + the created ones (each with one option per template).
    const expectSessions = ACTIVE_ADDRESSES + seeded.sessions + createdStored;
    if (tableCounts.sessions !== expectSessions)
      throw new Error(`${tableCounts.sessions} sessions, expected ${expectSessions}`);
    if (tableCounts.paymaster_usage !== seeded.paymasterUsage)
      throw new Error(`${tableCounts.paymaster_usage} usage rows, expected ${seeded.paymasterUsage}`);
    if (tableCounts.events !== seeded.events)
      throw new Error(`${tableCounts.events} events, expected ${seeded.events}`);

    const first = byStep.get(STEPS[0]!)!;
    const last = byStep.get(STEPS[STEPS.length - 1]!)!;
    const curve = (pick: (step: typeof first) => number) =>
      Object.fromEntries(STEPS.map((n) => [`n${n}`, pick(byStep.get(n)!) / pick(first)]));
    const p99 = (figures: Figures) =>
      `p99 ${figures.latencyP99Ms.toFixed(1)} ms (${figures.requestsPerSec.toFixed(0)} req/s)`;
    const ratios = {
      createThroughput1MVs1k: last.create.requestsPerSec / first.create.requestsPerSec,
      statusP991MVs1k: last.status.latencyP99Ms / first.status.latencyP99Ms,
      feedDepthP991MVs1k: last.feed.latencyP99Ms / first.feed.latencyP99Ms,
      monitorScanRate1MVs1k: last.monitorLogsPerSec / first.monitorLogsPerSec,
      healthThroughput1MVs1k: last.health.requestsPerSec / first.health.requestsPerSec,
    };
    reportBenchmark('scale', {
      steps: STEPS,
      history: {
        otherMerchants: OTHER_MERCHANTS,
        benchMerchantShare: 'half of every table (even indexes)',
        activeDepositAddresses: ACTIVE_ADDRESSES,
        activeSeedSec,
        seededTotal: seeded,
        tableCounts,
        sessionsCreatedThroughApi: createdOk,
        seeding:
          'COPY FROM STDIN (bench/lib/seedCopy.ts over the pg client protocol), VACUUM ANALYZE after each step',
      },
      load: {
        ...LOAD,
        rounds: ROUNDS,
        order:
          'per N: one settling round discarded, then health, create, status, feed alternate over the rounds (a round re-run when the load average moved by more than 1); then one discarded and MONITOR_PASSES measured monitor passes',
        statusIds: STATUS_SAMPLE,
        feedCursors: `${CURSOR_SAMPLE} cursors 80–99 % down the bench merchant's usage history, limit ${FEED_LIMIT}`,
        monitor: `${BLOCKS} blocks × ${LOGS_PER_BLOCK} transfers to active addresses, maxBlockRange ${MAX_BLOCK_RANGE}, ${MONITOR_PASSES} measured passes per N (median)`,
      },
      machine: { atStart: machineAtStart, atEnd: machineLoad() },
      curves: {
        createThroughput: curve((step) => step.create.requestsPerSec),
        statusP99: curve((step) => step.status.latencyP99Ms),
        feedDepthP99: curve((step) => step.feed.latencyP99Ms),
        monitorScanRate: curve((step) => step.monitorLogsPerSec),
        healthThroughput: curve((step) => step.health.requestsPerSec),
      },
      perStep,
      ratios,
      goals: [
        {
          label: 'session creation throughput at 1M rows vs 1k',
          now: ratios.createThroughput1MVs1k,
          goal: { atLeast: 0.8 },
          subject: `${last.create.requestsPerSec.toFixed(0)} req/s at 1M`,
          baseline: `${first.create.requestsPerSec.toFixed(0)} req/s at 1k`,
        },
        {
          label: 'status p99 at 1M rows vs 1k',
          now: ratios.statusP991MVs1k,
          goal: { atMost: 1.5 },
          subject: `${p99(last.status)} at 1M`,
          baseline: `${p99(first.status)} at 1k`,
        },
        {
          label: 'activity feed p99 at depth, 1M rows vs 1k',
          now: ratios.feedDepthP991MVs1k,
          goal: { atMost: 1.5 },
          subject: `${p99(last.feed)} at 1M`,
          baseline: `${p99(first.feed)} at 1k`,
        },
        {
          label: 'monitor scan rate, 10k active addresses, 1M rows vs 1k',
          now: ratios.monitorScanRate1MVs1k,
          goal: { atLeast: 0.8 },
          subject: `${last.monitorLogsPerSec.toFixed(0)} logs/s at 1M`,
          baseline: `${first.monitorLogsPerSec.toFixed(0)} logs/s at 1k`,
        },
      ],
    });
    for (const n of STEPS) {
      const step = byStep.get(n)!;
      process.stdout.write(
        `  N=${n}: create ${step.create.requestsPerSec.toFixed(0)} req/s (×${(step.create.requestsPerSec / first.create.requestsPerSec).toFixed(2)}), ` +
          `status p99 ${step.status.latencyP99Ms.toFixed(1)} ms (×${(step.status.latencyP99Ms / first.status.latencyP99Ms).toFixed(2)}), ` +
          `feed p99 ${step.feed.latencyP99Ms.toFixed(1)} ms (×${(step.feed.latencyP99Ms / first.feed.latencyP99Ms).toFixed(2)}), ` +
          `monitor ${step.monitorLogsPerSec.toFixed(0)} logs/s (×${(step.monitorLogsPerSec / first.monitorLogsPerSec).toFixed(2)}), ` +
          `health ${step.health.requestsPerSec.toFixed(0)} req/s (×${(step.health.requestsPerSec / first.health.requestsPerSec).toFixed(2)})\n`,
      );
    }
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the queries behind each measured route, as the repositories build them
 * (db/sessions.ts, db/paymasterUsage.ts, db/deposits.ts), plus the dashboard's other history readers.
 */
async function explainAll(
  pg: Client,
  values: {
    benchMerchantId: string;
    sessionId: string;
    cursorSeq: string;
    recipients: string[];
    activeSessionId: string;
  },
): Promise<Record<string, { sql: string; plan: string; seqScans: string[] }>> {
  const since24h = new Date(Date.now() - 24 * 3600_000);
  const watchAfter = new Date(Date.now() - 7 * 24 * 3600_000);
  const queries: Record<string, [string, unknown[]]> = {
    statusSessionById: ['select * from "sessions" where "id" = $1', [values.sessionId]],
    sessionPaymentOptions: [
      'select * from "payment_options" where "session_id" = $1 order by "chain_id", "symbol"',
      [values.sessionId],
    ],
    createMerchantById: ['select * from "merchants" where "id" = $1', [values.benchMerchantId]],
    feedAtDepth: [
      'select * from "paymaster_usage" where "merchant_id" = $1 and "seq" < $2 order by "seq" desc limit $3',
      [values.benchMerchantId, values.cursorSeq, FEED_LIMIT + 1],
    ],
    feedAtDepthStatusFilter: [
      'select * from "paymaster_usage" where "merchant_id" = $1 and "status" = $2 and "seq" < $3 order by "seq" desc limit $4',
      [values.benchMerchantId, 'dropped', values.cursorSeq, FEED_LIMIT + 1],
    ],
    feedAtDepthChainFilter: [
      'select * from "paymaster_usage" where "merchant_id" = $1 and "chain_id" = $2 and "seq" < $3 order by "seq" desc limit $4',
      [values.benchMerchantId, CHAIN_ID, values.cursorSeq, FEED_LIMIT + 1],
    ],
    recentOperations: [
      'select * from "paymaster_usage" where "merchant_id" = $1 and "user_op_hash" is not null order by "seq" desc limit $2',
      [values.benchMerchantId, 20],
    ],
    overview24h: [
      `select "status", "mode", count(*) as "count", coalesce(sum(actual_gas_cost), 0)::text as "gas_cost_wei"
         from "paymaster_usage" where "merchant_id" = $1 and "created_at" >= $2 group by "status", "mode"`,
      [values.benchMerchantId, since24h],
    ],
    monitorWatchedAddresses: [
      `select distinct lower(deposit_address) as "address" from "payment_options"
         where "chain_id" = $1 and "session_expires_at" > $2`,
      [CHAIN_ID, watchAfter],
    ],
    monitorDepositTargets: [
      `select "option"."session_id", "option"."deposit_address", "option"."token_address", "option"."amount",
              "session"."status", "session"."expires_at"
         from "payment_options" as "option" inner join "sessions" as "session" on "session"."id" = "option"."session_id"
         where "option"."chain_id" = $1 and lower(option.deposit_address) = any($2::text[])`,
      [CHAIN_ID, values.recipients],
    ],
    monitorAcceptedTotal: [
      `select coalesce(sum(amount), 0)::text as "total" from "deposits"
         where "session_id" = $1 and "chain_id" = $2 and "token_address" = $3 and "kind" = $4`,
      [values.activeSessionId, CHAIN_ID, '0x0', 'accepted'],
    ],
    dashboardSessionsDeepPage: [
      `select * from "sessions" where "merchant_id" = $1 order by "created_at" desc, "id" limit $2 offset $3`,
      [values.benchMerchantId, 20, 20 * 999],
    ],
    dashboardSessionsCount: [
      'select count(*) as "total" from "sessions" where "merchant_id" = $1',
      [values.benchMerchantId],
    ],
  };
  const plans: Record<string, { sql: string; plan: string; seqScans: string[] }> = {};
  for (const [name, [text, parameters]] of Object.entries(queries)) {
    // Twice: the first warms the cache, the stored plan is the warm one.
    await pg.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, parameters);
    const { rows } = await pg.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${text}`,
      parameters,
    );
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    plans[name] = { sql: text.replace(/\s+/g, ' '), plan, seqScans: seqScans(plan) };
  }
  return plans;
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
