import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { generateSigningJwk } from '../config/signingJwk';
import { createDb, type Db } from '../db/client';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { findFreePort } from '../dev/services/freePort';
import { startHaproxy, type RunningHaproxy } from '../dev/services/haproxy';
import { latencyPercentiles, runAutocannon, type LoadFigures } from './lib/load';
import { createSandboxSession, signUpBenchMerchant } from './lib/merchantApi';
import {
  expectSignedResult,
  GENEROUS_PAYMASTER_LIMITS,
  measureRpcLoad,
  rpcBodies,
  seedSponsoringMerchant,
  type RpcLoadFigures,
} from './lib/paymasterRpc';
import { cpuSeconds, processMemory, tcpLocalPorts, type ProcessMemory } from './lib/procStats';
import { reportBenchmark } from './lib/results';
import { machineLoad, measureRounds } from './lib/rounds';
import { startBenchServices } from './lib/services';
import { startTarget } from './lib/target';
import { startWorkerProcess } from './lib/workerProcess';

/**
 * Issue 31's bench: the public session status route (GET /v1/sessions/{id}/status) and
 * pm_getPaymasterData through HAProxy (the rules `npm start` uses with API_REPLICAS > 1) in front of one
 * `api/main.ts` process, and in front of two. Both sets run at once on the same Postgres, signer and
 * worker, and their loads alternate in rounds, so a burst of other work on the shared machine hits both.
 * On this 2-core machine a second replica shares the same cores with the first, Postgres, the signer,
 * HAProxy and the load generator: the ratio says what a second process costs or gains here, not how the
 * service scales on more cores.
 *
 * From /proc, for each load: the CPU seconds each process used per 1,000 answered requests (api replicas,
 * HAProxy, signer, worker, the Postgres backends, and the load generator for scale), each process's
 * resident memory before and after the rounds, and how many Postgres connections each api replica holds. Ratios are
 * against the one-replica set in the same run. `npm run bench replicas`, or `npx tsx bench/replicas.bench.ts`.
 */
const ROUNDS = 3;
const LOAD = { connections: 32, durationSec: 5 };
const SESSIONS = 50;
/** The service-wide limits stay far above the load: this measures the routes, not the limiter. */
const GENEROUS_LIMITS = {
  ...GENEROUS_PAYMASTER_LIMITS,
  RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: '1000000',
  RATE_LIMIT_LOGIN_PER_MINUTE: '1000000',
};

type Kind = 'api' | 'haproxy' | 'signer' | 'worker' | 'postgres' | 'loadGenerator';
const KINDS: readonly Kind[] = ['api', 'haproxy', 'signer', 'worker', 'postgres', 'loadGenerator'];

interface ReplicaSet {
  name: string;
  url: string;
  apiPids: number[];
  balancer: RunningHaproxy;
  stop(): Promise<void>;
}

/** `count` api processes (their logs written as in production, to a stdout nobody reads) behind HAProxy. */
async function startReplicaSet(
  name: string,
  count: number,
  env: Record<string, string>,
): Promise<ReplicaSet> {
  const balancerPort = await findFreePort();
  const children: ChildProcess[] = [];
  const replicas: { name: string; host: string; port: number; url: string; child: ChildProcess }[] = [];
  for (let index = 1; index <= count; index++) {
    const port = await findFreePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      cwd: join(__dirname, '..'),
      env: {
        ...process.env,
        ...env,
        PUBLIC_BASE_URL: `http://127.0.0.1:${balancerPort}`,
        PORT: String(port),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr!.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-8000)));
    child.once('exit', (code) => {
      if (code) process.stderr.write(`${name} api-${index} exited ${code}:\n${errors}\n`);
    });
    children.push(child);
    replicas.push({ name: `api-${index}`, host: '127.0.0.1', port, url: `http://127.0.0.1:${port}`, child });
  }
  for (const replica of replicas) await untilAnswers(`${replica.url}/ready`, 200, replica.child);
  const balancer = await startHaproxy({
    port: balancerPort,
    replicas,
    configFile: join(await mkdtemp(join(tmpdir(), 'stablepay-bench-haproxy-')), 'haproxy.cfg'),
  });
  await untilAnswers(`${balancer.url}/ready`, 200);
  return {
    name,
    url: balancer.url,
    apiPids: replicas.map((replica) => replica.child.pid!),
    balancer,
    async stop() {
      await balancer.stop();
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

async function untilAnswers(url: string, status: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null))
      throw new Error(`${url}: its process exited`);
    const answered = await fetch(url, { signal: AbortSignal.timeout(3_000) }).then(
      (response) => response.status,
      () => 0,
    );
    if (answered === status) return;
    if (Date.now() > deadline) throw new Error(`${url} answered ${answered}, not ${status}, for 180 s`);
    await delay(250);
  }
}

/** The client backends of the bench's database, by pid and client port. */
async function postgresBackends(db: Db): Promise<{ pid: number; port: number | null }[]> {
  const { rows } = await sql<{ pid: number; client_port: number | null }>`
    SELECT pid, client_port FROM pg_stat_activity
    WHERE datname = current_database() AND backend_type = 'client backend'`.execute(db);
  return rows.map((row) => ({ pid: row.pid, port: row.client_port }));
}

/** CPU seconds used so far by each kind of process serving `set` (a process gone meanwhile counts 0). */
async function cpuByKind(
  db: Db,
  set: ReplicaSet,
  shared: { signerPid: number; workerPid: number },
): Promise<Map<string, number>> {
  const read = (pid: number) => {
    try {
      return cpuSeconds(pid);
    } catch {
      return 0;
    }
  };
  const byPid = new Map<string, number>();
  for (const pid of set.apiPids) byPid.set(`api:${pid}`, read(pid));
  byPid.set(`haproxy:${set.balancer.pid}`, read(set.balancer.pid));
  byPid.set(`signer:${shared.signerPid}`, read(shared.signerPid));
  byPid.set(`worker:${shared.workerPid}`, read(shared.workerPid));
  byPid.set(`loadGenerator:${process.pid}`, read(process.pid));
  for (const { pid } of await postgresBackends(db)) byPid.set(`postgres:${pid}`, read(pid));
  return byPid;
}

/** CPU seconds per 1,000 answered requests, per kind of process, between two cpuByKind readings. */
function perThousand(
  before: Map<string, number>,
  after: Map<string, number>,
  answered: number,
): Record<Kind, number> {
  const used = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<Kind, number>;
  for (const [key, seconds] of after) {
    const kind = key.split(':')[0] as Kind;
    // A backend that connected during the load used all its CPU in it.
    used[kind] += Math.max(0, seconds - (before.get(key) ?? 0));
  }
  return Object.fromEntries(
    KINDS.map((kind) => [kind, (used[kind] / Math.max(answered, 1)) * 1000]),
  ) as Record<Kind, number>;
}

/** Means over rounds of the per-1,000 CPU figures. */
function meanCpu(rounds: Record<Kind, number>[]): Record<Kind, number> {
  return Object.fromEntries(
    KINDS.map((kind) => [kind, rounds.reduce((total, round) => total + round[kind], 0) / rounds.length]),
  ) as Record<Kind, number>;
}

const mib = (kib: number) => kib / 1024;
const ratio = (subject: number, baseline: number) => subject / Math.max(baseline, 0.001);

async function main(): Promise<void> {
  const started = performance.now();
  const machineAtStart = machineLoad();
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const services = await startBenchServices({ chains: true });
    cleanups.unshift(() => services.stop());
    const db = createDb({ connectionString: services.databaseUrl, maxConnections: 2 });
    cleanups.unshift(() => db.destroy().then(() => delay(300)));
    const { clientId } = await seedSponsoringMerchant(db);

    const sharedSecret = randomBytes(32).toString('hex');
    const signer = await startTarget('signer.ts', [], {
      ...services.env,
      SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
      SIGNER_SHARED_SECRET: sharedSecret,
      LOG_LEVEL: 'info',
    });
    cleanups.unshift(() => signer.stop());
    const worker = await startWorkerProcess({ ...services.env, LOG_LEVEL: 'info' });
    cleanups.unshift(() => worker.stop());

    const apiEnv = {
      ...services.env,
      ...GENEROUS_LIMITS,
      // Production's level: every request's access line is written (to a stdout nobody reads here).
      LOG_LEVEL: 'info',
      SIGNER_URL: signer.url,
      SIGNER_SHARED_SECRET: sharedSecret,
      // One signing key for every replica: a token one replica issues verifies on the other.
      JWT_PRIVATE_JWK: JSON.stringify(await generateSigningJwk('bench-replicas')),
      TRUST_PROXY: '1',
      TEMPORAL_START_TIMEOUT_MS: '20000',
    };
    const sets = {
      one: await startReplicaSet('one replica', 1, apiEnv),
      two: await startReplicaSet('two replicas', 2, apiEnv),
    };
    for (const set of Object.values(sets)) cleanups.unshift(() => set.stop());

    // Sessions to poll: created through the balancer like a merchant's server would.
    const merchant = await signUpBenchMerchant(sets.two.url);
    const sessionIds: string[] = [];
    for (let index = 0; index < SESSIONS; index++)
      sessionIds.push((await createSandboxSession(sets.two.url, merchant, { amount: '12.50' })).id);
    const clientHeaders = { 'x-client-id': clientId };
    const signedBodies = rpcBodies('pm_getPaymasterData');
    for (const set of Object.values(sets))
      await expectSignedResult(`${set.url}/v1/paymaster/rpc`, clientHeaders, signedBodies());

    const memoryOf = (pid: number): ProcessMemory | undefined => {
      try {
        return processMemory(pid);
      } catch {
        return undefined;
      }
    };
    // Resident memory before any load (started, sessions created, one signed answer each).
    const idleKiB = new Map<number, number>();
    for (const pid of [...sets.one.apiPids, ...sets.two.apiPids, signer.pid, worker.pid])
      idleKiB.set(pid, memoryOf(pid)?.rssKiB ?? 0);
    for (const set of Object.values(sets))
      idleKiB.set(set.balancer.pid, memoryOf(set.balancer.pid)?.rssKiB ?? 0);

    const shared = { signerPid: signer.pid, workerPid: worker.pid };
    const cpuRounds: Record<string, Record<Kind, number>[]> = {};
    const measuredCpu = <F extends LoadFigures>(
      name: string,
      set: ReplicaSet,
      run: () => Promise<{ figures: F; answered: number }>,
    ) => {
      cpuRounds[name] = [];
      return async (): Promise<F> => {
        const before = await cpuByKind(db, set, shared);
        const { figures, answered } = await run();
        const after = await cpuByKind(db, set, shared);
        cpuRounds[name]!.push(perThousand(before, after, answered));
        return figures;
      };
    };
    const statusLoad = (set: ReplicaSet) => async () => {
      let next = 0;
      const run = (duration: number) =>
        runAutocannon({
          url: set.url,
          connections: LOAD.connections,
          duration,
          requests: [
            {
              method: 'GET',
              setupRequest: (request) => ({
                ...request,
                path: `/v1/sessions/${sessionIds[next++ % sessionIds.length]}/status`,
              }),
            },
          ],
        });
      const warmUp = await run(1);
      const { result, latenciesMs } = await run(LOAD.durationSec);
      const figures: LoadFigures = {
        requestsPerSec: result.requests.average,
        ...latencyPercentiles(latenciesMs),
        requests: result.requests.total,
        non2xx: warmUp.result.non2xx + result.non2xx,
        errors: warmUp.result.errors + result.errors,
      };
      return { figures, answered: warmUp.result.requests.total + result.requests.total };
    };
    const paymasterLoad = (set: ReplicaSet) => async () => {
      const figures = await measureRpcLoad({
        url: set.url,
        path: '/v1/paymaster/rpc',
        headers: clientHeaders,
        nextBody: signedBodies,
        ...LOAD,
      });
      if (figures.jsonRpcErrors > 0)
        throw new Error(`pm_getPaymasterData answered JSON-RPC errors: ${figures.firstJsonRpcError}`);
      return { figures, answered: figures.resultsIncludingWarmUp };
    };
    const { figures, machine } = await measureRounds(
      {
        statusOne: measuredCpu('statusOne', sets.one, statusLoad(sets.one)),
        statusTwo: measuredCpu('statusTwo', sets.two, statusLoad(sets.two)),
        paymasterOne: measuredCpu('paymasterOne', sets.one, paymasterLoad(sets.one)),
        paymasterTwo: measuredCpu('paymasterTwo', sets.two, paymasterLoad(sets.two)),
      },
      ROUNDS,
    );
    // measureRounds' first, discarded settling round measured CPU too: keep the kept rounds only.
    const cpu = Object.fromEntries(
      Object.entries(cpuRounds).map(([name, rounds]) => [name, meanCpu(rounds.slice(-ROUNDS))]),
    ) as Record<keyof typeof figures, Record<Kind, number>>;

    // Memory and Postgres connections after the load, per process.
    const backends = await postgresBackends(db);
    const connectionsOf = (pid: number) => {
      const ports = tcpLocalPorts(pid);
      return backends.filter((backend) => backend.port !== null && ports.has(backend.port)).length;
    };
    const processes = [
      ...Object.entries(sets).flatMap(([setName, set]) => [
        ...set.apiPids.map((pid, index) => ({
          process: `api-${index + 1} (${setName})`,
          pid,
          postgresConnections: connectionsOf(pid),
        })),
        { process: `haproxy (${setName})`, pid: set.balancer.pid, postgresConnections: 0 },
      ]),
      { process: 'signer', pid: signer.pid, postgresConnections: connectionsOf(signer.pid) },
      { process: 'worker', pid: worker.pid, postgresConnections: connectionsOf(worker.pid) },
    ].map((entry) => ({ ...entry, idleRssKiB: idleKiB.get(entry.pid), memory: memoryOf(entry.pid) }));
    const backendMemory = backends.map((backend) => memoryOf(backend.pid)).filter(Boolean) as ProcessMemory[];
    const machineAtEnd = machineLoad();

    const { statusOne, statusTwo, paymasterOne, paymasterTwo } = figures;
    const describe = (label: string, subject: LoadFigures | RpcLoadFigures, baseline?: LoadFigures) =>
      `  ${label.padEnd(40)} ${subject.requestsPerSec.toFixed(0).padStart(6)} req/s  p99 ${subject.latencyP99Ms
        .toFixed(1)
        .padStart(7)} ms` +
      (baseline
        ? `   throughput ×${ratio(subject.requestsPerSec, baseline.requestsPerSec).toFixed(2)}, p99 ×${ratio(
            subject.latencyP99Ms,
            baseline.latencyP99Ms,
          ).toFixed(2)}`
        : '');
    process.stdout.write(
      `\n  ${LOAD.connections} connections through HAProxy, ${ROUNDS} alternating rounds of ${LOAD.durationSec} s after a 1 s warm-up each, ${machineAtStart.cpus} cores\n` +
        `${describe('status, 1 replica (baseline)', statusOne)}\n` +
        `${describe('status, 2 replicas', statusTwo, statusOne)}\n` +
        `${describe('pm_getPaymasterData, 1 replica (baseline)', paymasterOne)}\n` +
        `${describe('pm_getPaymasterData, 2 replicas', paymasterTwo, paymasterOne)}\n` +
        `\n  CPU seconds per 1,000 requests (all replicas of the set together):\n` +
        `  ${'load'.padEnd(30)} ${KINDS.map((kind) => kind.padStart(14)).join('')}\n` +
        Object.entries(cpu)
          .map(
            ([name, byKind]) =>
              `  ${name.padEnd(30)} ${KINDS.map((kind) => byKind[kind].toFixed(3).padStart(14)).join('')}\n`,
          )
          .join('') +
        `\n  resident memory before the load; after it (now / peak), and the Postgres connections held:\n` +
        processes
          .map(
            (entry) =>
              `  ${entry.process.padEnd(26)} ${mib(entry.idleRssKiB ?? 0).toFixed(0)} MiB idle; ${entry.memory ? `${mib(entry.memory.rssKiB).toFixed(0)} / ${mib(entry.memory.peakKiB).toFixed(0)} MiB` : 'gone'}` +
              (entry.postgresConnections
                ? `, ${entry.postgresConnections} Postgres connection${entry.postgresConnections === 1 ? '' : 's'}`
                : ''),
          )
          .join('\n') +
        `\n  Postgres: ${backendMemory.length} client backends, private memory (RssAnon) ${mib(
          backendMemory.reduce((total, memory) => total + memory.anonKiB, 0) /
            Math.max(backendMemory.length, 1),
        ).toFixed(1)} MiB each on average (RSS with the shared buffers they touched ${mib(
          backendMemory.reduce((total, memory) => total + memory.rssKiB, 0) /
            Math.max(backendMemory.length, 1),
        ).toFixed(1)} MiB)\n` +
        `  machine load average ${machineAtStart.loadAverage1m.toFixed(2)} → ${machineAtEnd.loadAverage1m.toFixed(2)} on ${machineAtStart.cpus} cores\n`,
    );

    reportBenchmark('replicas', {
      load: { ...LOAD, rounds: ROUNDS, warmUpSec: 1, generator: 'autocannon', through: 'HAProxy' },
      notes: [
        'Two sets run at once on the same Postgres, signer and worker: HAProxy + 1 api process, HAProxy + 2; their loads alternate in rounds.',
        `On ${machineAtStart.cpus} cores shared by every process and the load generator: the 2-vs-1 ratio is what a second process costs or gains here, not a scaling claim.`,
        'CPU seconds per 1,000 answered requests from /proc/<pid>/stat (utime + stime), warm-up included in both the CPU and the count.',
        "Postgres connections per process: backends whose client port is one of the process's TCP sockets.",
      ],
      machine: { atStart: machineAtStart, atEnd: machineAtEnd, ...machine },
      figures,
      cpuSecondsPer1000Requests: cpu,
      processes,
      postgresBackends: {
        count: backendMemory.length,
        anonKiB: backendMemory.map((memory) => memory.anonKiB),
        rssKiB: backendMemory.map((memory) => memory.rssKiB),
      },
      wallSeconds: (performance.now() - started) / 1000,
      ratios: {
        statusThroughputTwoVsOneReplica: ratio(statusTwo.requestsPerSec, statusOne.requestsPerSec),
        statusP99TwoVsOneReplica: ratio(statusTwo.latencyP99Ms, statusOne.latencyP99Ms),
        paymasterDataThroughputTwoVsOneReplica: ratio(
          paymasterTwo.requestsPerSec,
          paymasterOne.requestsPerSec,
        ),
        paymasterDataP99TwoVsOneReplica: ratio(paymasterTwo.latencyP99Ms, paymasterOne.latencyP99Ms),
        statusApiCpuPerRequestTwoVsOneReplica: ratio(cpu.statusTwo.api, cpu.statusOne.api),
        paymasterDataApiCpuPerRequestTwoVsOneReplica: ratio(cpu.paymasterTwo.api, cpu.paymasterOne.api),
      },
    });
    process.stdout.write(`  wall time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
