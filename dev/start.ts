import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync, type WriteStream } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { generateSigningJwk } from '../config/signingJwk';
import { LOCAL_PAYMASTER_SIGNER } from './chains/deployLocalChain';
import {
  LOCAL_SETTLEMENT_OPERATOR,
  LOCAL_SUBSCRIPTION_EXECUTOR,
  LOCAL_YIELD_DEPLOYER,
} from './chains/localSettlement';
import { localErc20GasTokenRates } from './chains/localPaymasters';
import { createDb } from '../db/client';
import { migrateToLatest } from '../db/migrate';
import { ANVIL_DEV_ACCOUNTS } from './services/anvil';
import { startLocalChains } from './services/localChains';
import { startDnsServer } from './services/dnsServer';
import { startMailDev } from './services/mailDev';
import { ensureDatabase, startEmbeddedPostgres } from './services/postgres';
import { startTemporalDevServer } from './services/temporal';
import { findFreePort } from './services/freePort';
import { startHaproxy, type ApiReplicaAddress } from './services/haproxy';
import { ensureDevMerchant } from './devMerchant';
import { readStackFile } from './stackFile';
import { watchStackEvents } from './stackEvents';
import { temporalCliPath } from './installTemporal';
import type { StackDescription } from './stackDescription';
import { devDashboardLink } from './dashboardSignInLink';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../workers/processMemory';
import { localChainIdsFromEnv } from './localChains';
import { decideAfterCrash, describeExit, recentCrashes, type ExitCause } from './restartPolicy';
import { devStateDir } from './stackFile';

/**
 * `npm start`: the whole stack on this machine with zero configuration. PostgreSQL (embedded unless
 * DATABASE_URL), Temporal dev server with its UI (unless TEMPORAL_ADDRESS), three anvil chains with
 * our contracts, MailDev (login codes; its mail is kept for this run only), then the worker and api
 * processes. Data lives in .dev/ and is reused on the next start.
 *
 * Ctrl-C stops everything in dependency order (STOP_ORDER). The terminal sends Ctrl-C's SIGINT to its
 * whole foreground process group, which would stop Postgres while the worker still drains (an
 * unhandled "terminating connection due to administrator command"). So the stack runs in a detached
 * supervisor (its own session, which the terminal's signals do not reach) and this foreground process
 * only asks it to stop and waits.
 *
 * API_REPLICAS=n runs n api processes behind HAProxy on PORT; WORKER_REPLICAS=m runs m workers.
 *
 * A crashed api, worker, signer or relayer is restarted (dev/restartPolicy.ts: a back-off from 1 s doubling
 * to 30 s, one line each time); the stack stops only for a crash loop, or when a dependency it cannot
 * restart (Postgres, Temporal, a chain or bundler, MailDev, HAProxy) exits, and it says which and why.
 *
 * STABLEPAY_DEV_DIR keeps the state somewhere other than .dev/, and DEV_CHAIN_IDS starts only some of the
 * local chains (`DEV_CHAIN_IDS=11155111,84532`): a second stack beside a developer's (the replica test).
 */
const root = resolve(__dirname, '..');
const devDir = devStateDir();
const logsDir = join(devDir, 'logs');
const SUPERVISOR_ARGUMENT = '--supervise';
const log = (message: string) => process.stdout.write(`[stack] ${message}\n`);

type ServiceName =
  | 'events'
  | 'api'
  | 'worker'
  | 'lb'
  | 'signer'
  | 'relayer'
  | 'chains'
  | 'maildev'
  | 'dns'
  | 'temporal'
  | 'postgres';
/** A service, or one replica of it (`api-2`, `worker-1`): replicas stop in their service's phase. */
type ProcessName = ServiceName | `${'api' | 'worker'}-${number}`;

/**
 * Who stops before whom, one phase at a time (a phase's services stop together): the api replicas and the
 * workers first, each draining what it has in flight (the load balancer, still up, sees each api replica
 * turn not ready); then the balancer and what they called (the signer, the relayer); then the
 * chains with their bundlers (each bundler before its chain), MailDev and the DNS server; Temporal and
 * PostgreSQL last.
 */
const STOP_ORDER: ServiceName[][] = [
  ['events', 'api', 'worker'],
  ['lb', 'signer', 'relayer'],
  ['chains', 'maildev', 'dns'],
  ['temporal'],
  ['postgres'],
];
const stops = new Map<ProcessName, () => Promise<unknown>>();
const serviceOf = (name: ProcessName): ServiceName => name.replace(/-\d+$/, '') as ServiceName;

/** API_REPLICAS / WORKER_REPLICAS: how many of each process `npm start` runs (1 unless set). */
function replicaCount(variable: 'API_REPLICAS' | 'WORKER_REPLICAS'): number {
  const value = process.env[variable] ?? '1';
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 16)
    throw new Error(`${variable} must be a whole number from 1 to 16 (got "${value}")`);
  return count;
}

async function main(): Promise<void> {
  await mkdir(devDir, { recursive: true });
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to enter .dev/.
  await chmod(devDir, 0o755);
  await mkdir(logsDir, { recursive: true });

  const [databaseUrl, temporal, chains, mail, dns] = await Promise.all([
    startDatabase(),
    startTemporal(),
    startChains(),
    startMail(),
    startDns(),
  ]);
  const port = Number(process.env.PORT ?? 3000);
  const apiUrl = process.env.PUBLIC_BASE_URL ?? `http://localhost:${port}`;
  const devAccount = ANVIL_DEV_ACCOUNTS[1];
  const signerUrl = `http://127.0.0.1:${Number(process.env.SIGNER_PORT ?? 3100)}`;
  // The api replicas on this host reach the signer on its Unix-domain socket (no TCP on the path every
  // signed answer takes); its TCP port stays for anything else. A state folder too deep for a socket path
  // (the kernel allows 107 bytes) keeps TCP.
  const signerSocketPath = join(devDir, 'signer.sock');
  const signerSocket = signerSocketPath.length <= 100 ? signerSocketPath : undefined;
  const stack: StackDescription = {
    apiUrl,
    temporalAddress: temporal.address,
    temporalUiUrl: temporal.uiUrl,
    signerUrl,
    databaseUrl,
    chains,
    mail,
    dns,
    devAccount: { address: devAccount.address, privateKey: devAccount.privateKey },
  };
  const stackFile = join(devDir, 'stack.json');
  const previousDevMerchant = readStackFile(stackFile)?.devMerchant;
  await writeFile(stackFile, `${JSON.stringify(stack, null, 2)}\n`);

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    PORT: String(port),
    PUBLIC_BASE_URL: apiUrl,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    DEPLOYMENTS_FILE: stackFile,
    JWT_PRIVATE_JWK: await persistentJwtKey(),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    SMTP_URL: mail.smtpUrl,
    YIELD_DNS_SERVER: `${dns.host}:${dns.port}`,
    // Public: the api lists it and checks subscribe requests against it; only the worker gets its key.
    SUBSCRIPTION_EXECUTOR_ADDRESS: LOCAL_SUBSCRIPTION_EXECUTOR.address,
    // Domains are checked every 5 s here, so a record added to the records file verifies at once.
    YIELD_DOMAIN_POLL_MS: process.env.YIELD_DOMAIN_POLL_MS ?? '5000',
    ...Object.fromEntries(chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
    // The paymaster: each chain's Alto bundler, and the signing service (a fresh shared secret per start).
    ...Object.fromEntries(chains.map((chain) => [`BUNDLER_URL_${chain.chainId}`, chain.bundlerUrl])),
    SIGNER_URL: signerSocket ? `unix://${signerSocket}` : signerUrl,
    SIGNER_SHARED_SECRET: randomBytes(32).toString('hex'),
  };

  // The maintenance schedules are the worker's to create (workers/runWorker.ts), as in production.

  // Only the signer process gets the signing key.
  startProcess('signer', ['signer/main.ts'], {
    ...env,
    SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
    SIGNER_ERC20_TOKENS: JSON.stringify(localErc20GasTokenRates(chains)),
    ...(signerSocket && { SIGNER_SOCKET_PATH: signerSocket }),
  });
  // Only the worker gets the settlement operator key (it flushes forwarders) and, apart from it, the key
  // that pays for yield vault deploys, and the subscription executor's.
  const workerReplicas = replicaCount('WORKER_REPLICAS');
  for (let replica = 1; replica <= workerReplicas; replica++) {
    startProcess(
      workerReplicas === 1 ? 'worker' : `worker-${replica}`,
      ['dev/worker.ts'],
      {
        ...env,
        ...WORKER_PROCESS_ENV,
        OPERATOR_PRIVATE_KEY: LOCAL_SETTLEMENT_OPERATOR.privateKey,
        YIELD_DEPLOYER_PRIVATE_KEY: LOCAL_YIELD_DEPLOYER.privateKey,
        SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: LOCAL_SUBSCRIPTION_EXECUTOR.privateKey,
      },
      WORKER_NODE_FLAGS,
    );
  }
  // The local stand-in of the cross-chain messaging network: delivers bridged USDe to the settlement chain.
  startProcess('relayer', ['dev/relayer.ts', stackFile], env);
  const api = await startApiReplicas(env, port);
  const devMerchant = await ensureDevMerchant({
    apiUrl: `http://127.0.0.1:${port}`,
    mailWebUrl: mail.webUrl,
    privateKey: devAccount.privateKey,
    previous: previousDevMerchant,
  });
  await writeFile(stackFile, `${JSON.stringify({ ...stack, devMerchant }, null, 2)}\n`);
  // A one-time sign-in link for the dev merchant (a minute, once; the page asks before it signs in).
  const dashboardLink = await devDashboardLink(databaseUrl, apiUrl, devMerchant.id);

  log('ready');
  const temporalCli = process.env.TEMPORAL_ADDRESS
    ? 'temporal'
    : relative(process.cwd(), temporalCliPath()) || temporalCliPath();
  process.stdout.write(
    [
      '',
      `  API           ${apiUrl}  (health: /health, readiness: /ready, contract: /openapi.json)`,
      ...(api.replicas.length > 1
        ? [
            `                HAProxy in front of ${api.replicas.length} api replicas: ${api.replicas.map((replica) => `${replica.name} ${replica.host}:${replica.port}`).join(', ')}`,
          ]
        : []),
      ...(workerReplicas > 1
        ? [`  Workers       ${workerReplicas} replicas (worker-1 … worker-${workerReplicas})`]
        : []),
      `  Dashboard     ${dashboardLink}`,
      `                (signs in as the dev merchant once, within a minute; a new link: npm run --silent dashboard-link;`,
      `                ${apiUrl}/dashboard signs in by wallet or e-mail code)`,
      `  Temporal UI   ${temporal.uiUrl}`,
      `  Temporal      ${temporal.address} (namespace ${temporal.namespace})`,
      `  Temporal CLI  ${temporalCli} workflow list --address ${temporal.address} --namespace ${temporal.namespace}`,
      `  PostgreSQL    ${databaseUrl}`,
      ...chains.map(
        (chain) =>
          `  ${chain.network.padEnd(13)} ${chain.rpcUrl}  (chain id ${chain.chainId}, bundler ${chain.bundlerUrl})`,
      ),
      `  Signer        ${signerUrl}${signerSocket ? `  (the api uses its socket, unix://${signerSocket})` : ''}`,
      `  Mail (MailDev) ${mail.webUrl}  (SMTP ${mail.smtpUrl}: login and verification codes land here)`,
      `  DNS           ${dns.host}:${dns.port}  (TXT records for domain verification: edit ${dns.recordsFile})`,
      `  Dev account   ${devAccount.address} (funded on every local chain; tokens have an open mint)`,
      `  Dev merchant  ${devMerchant.id}  (${devMerchant.email}; its sk_live_ key is devMerchant.apiKey in the stack file,`,
      `                a JWT: npm run --silent token; pay a session: npm run pay -- <sessionId>)`,
      `  Stack file    ${stackFile}`,
      `  Logs          ${logsDir}/<process>.log  (${[...(api.replicas.length > 1 ? ['lb', ...api.replicas.map((replica) => replica.name)] : ['api']), ...(workerReplicas > 1 ? Array.from({ length: workerReplicas }, (_, index) => `worker-${index + 1}`) : ['worker']), 'signer', 'relayer', 'temporal'].join(', ')})`,
      '',
      `  Ctrl-C (or kill ${process.pid}, the supervisor) stops everything; the next \`npm start\` reuses the data in ${devDir.startsWith(root) ? relative(root, devDir) : devDir}/.`,
      '  What happens from here (sessions, webhooks, sponsored operations), one line each:',
      '',
    ].join('\n'),
  );
  const eventsDb = createDb({ connectionString: databaseUrl, maxConnections: 2 });
  const events = watchStackEvents({
    db: eventsDb,
    print: (line) => process.stdout.write(`  ${new Date().toISOString().slice(11, 19)} ${line}\n`),
  });
  stops.set('events', async () => {
    events.stop();
    await eventsDb.destroy();
  });
}

/**
 * One api process on PORT (API_REPLICAS unset or 1), or API_REPLICAS of them on free ports with HAProxy
 * on PORT in front (dev/services/haproxy.ts). Resolves once every replica, and the balancer, answer.
 */
async function startApiReplicas(
  env: NodeJS.ProcessEnv,
  port: number,
): Promise<{ replicas: ApiReplicaAddress[] }> {
  const count = replicaCount('API_REPLICAS');
  if (count === 1) {
    // Nobody to notice a drain: a single api stops as soon as its requests in flight are done.
    startProcess('api', ['api/main.ts'], { API_DRAIN_MS: '0', ...env });
    await waitForHealth(`http://127.0.0.1:${port}/health`);
    return { replicas: [{ name: 'api', host: '127.0.0.1', port }] };
  }
  const replicas: ApiReplicaAddress[] = [];
  for (let replica = 1; replica <= count; replica++) {
    const name = `api-${replica}` as const;
    const replicaPort = await findFreePort();
    // Behind the balancer the client's address is the last X-Forwarded-For entry (the per-IP limits).
    startProcess(name, ['api/main.ts'], { TRUST_PROXY: '1', ...env, PORT: String(replicaPort) });
    replicas.push({ name, host: '127.0.0.1', port: replicaPort });
  }
  await Promise.all(replicas.map((replica) => waitForHealth(`http://127.0.0.1:${replica.port}/health`)));
  const lbLog = logFile('lb');
  const balancer = await startHaproxy({
    host: '0.0.0.0',
    port,
    replicas,
    configFile: join(devDir, 'haproxy.cfg'),
    output: (chunk) => lbLog.write(chunk),
  });
  stops.set('lb', balancer.stop);
  watchDependency(
    balancer.exited.then((how) => `HAProxy exited (${how})`),
    'the api replicas are reached only through it',
  );
  await waitForHealth(`http://127.0.0.1:${port}/ready`);
  log(`HAProxy on port ${port} in front of ${replicas.map((replica) => replica.name).join(', ')}`);
  return { replicas };
}

async function startDatabase(): Promise<string> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const server = await startEmbeddedPostgres({
      dataDir: join(devDir, 'postgres'),
      persistent: true,
      // The supervisor's own SIGTERM handler stops everything in order (`kill <pid>` in the banner).
      callerHandlesSignals: true,
    });
    stops.set('postgres', server.stop);
    watchDependency(
      server.exited.then((how) => `PostgreSQL exited (${how})`),
      'its data folder must go through crash recovery before anything connects, which the next `npm start` does first',
    );
    adminUrl = server.adminUrl;
  }
  const url = process.env.DATABASE_URL ?? (await ensureDatabase(adminUrl, 'stablepay'));
  const db = createDb({ connectionString: url, maxConnections: 1 });
  try {
    const applied = await migrateToLatest(db);
    log(`database ready (${applied.length} migration(s) applied)`);
  } finally {
    await db.destroy();
  }
  return url;
}

async function startTemporal(): Promise<{ address: string; uiUrl: string; namespace: string }> {
  if (process.env.TEMPORAL_ADDRESS) {
    return {
      address: process.env.TEMPORAL_ADDRESS,
      uiUrl: '(external Temporal: its own UI)',
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    };
  }
  const temporalLog = logFile('temporal');
  const server = await startTemporalDevServer({
    dbFile: join(devDir, 'temporal.sqlite'),
    stderr: (chunk) => temporalLog.write(chunk),
  });
  stops.set('temporal', server.stop);
  watchDependency(
    server.exited.then((how) => `the Temporal dev server ${how}`),
    'it listened on ports chosen at start-up, which every process was given',
  );
  log(`temporal dev server at ${server.address}, UI ${server.uiUrl}`);
  return server;
}

async function startMail(): Promise<StackDescription['mail']> {
  const server = await startMailDev();
  stops.set('maildev', server.stop);
  watchDependency(
    server.exited.then((how) => `MailDev exited (${how})`),
    'its SMTP port was chosen at start-up and given to every process',
  );
  log(`MailDev at ${server.webUrl} (SMTP ${server.smtpUrl})`);
  return { smtpUrl: server.smtpUrl, webUrl: server.webUrl };
}

/** The local DNS server; its TXT records are whatever `.dev/dns-records.json` says at the moment of a query. */
async function startDns(): Promise<StackDescription['dns']> {
  const recordsFile = join(devDir, 'dns-records.json');
  if (!existsSync(recordsFile)) await writeFile(recordsFile, '{}\n');
  const server = await startDnsServer({
    port: Number(process.env.DNS_PORT ?? 5354),
    records: (name) => {
      try {
        const all = JSON.parse(readFileSync(recordsFile, 'utf8')) as Record<string, string[] | string>;
        const entry = all[name] ?? all[`${name}.`];
        return entry === undefined ? undefined : ([] as string[]).concat(entry);
      } catch {
        return undefined;
      }
    },
  });
  stops.set('dns', server.stop);
  log(`DNS server at ${server.address} (records from ${recordsFile})`);
  return { host: server.host, port: server.port, recordsFile };
}

async function startChains(): Promise<StackDescription['chains']> {
  const local = await startLocalChains({
    blockTime: 1,
    stateDir: join(devDir, 'chains'),
    bundlers: true,
    chainIds: localChainIdsFromEnv(),
  });
  stops.set('chains', local.stop);
  watchDependency(
    local.exited,
    'anvil saves a chain only when it stops, so a killed chain would come back without the blocks the database and the processes remember',
  );
  log(
    `chains, contracts and bundlers ready (${local.chains.map((chain) => `${chain.network} ${chain.rpcUrl}`).join(', ')})`,
  );
  return local.chains;
}

/** The dev stack keeps one JWT signing key in .dev/, so restarts do not log anyone out. */
async function persistentJwtKey(): Promise<string> {
  const file = join(devDir, 'jwt-signing-key.json');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const key = JSON.stringify(await generateSigningJwk());
  await writeFile(file, key, { mode: 0o600 });
  return key;
}

/**
 * Runs `args` (the script and its arguments; `nodeFlags`: Node's own, the worker's WORKER_NODE_FLAGS) as
 * `name`, and runs it again whenever it exits on its own, after the restart policy's back-off; a crash
 * loop stops the stack.
 */
function startProcess(
  name: ProcessName,
  args: string[],
  env: NodeJS.ProcessEnv,
  nodeFlags: readonly string[] = [],
): void {
  // The terminal stays quiet: the whole output goes to the process's log file (kept across its restarts),
  // the last lines are kept to say why it stopped.
  const file = logFile(name);
  let tail = '';
  let child: ChildProcess;
  let crashTimes: number[] = [];
  let stopping = false;
  let pendingRestart: NodeJS.Timeout | undefined;

  const run = () => {
    // The process itself, not tsx's CLI wrapper (which runs it in a grandchild that a SIGKILL would orphan).
    child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        file.write(chunk);
        tail = (tail + chunk.toString('utf8')).slice(-4000);
      });
    }
    child.once('exit', (code, signal) => {
      if (stopping || shuttingDown) return;
      const cause: ExitCause = signal ? { signal } : { code: code ?? 0 };
      const now = Date.now();
      const decision = decideAfterCrash({ name, cause, crashTimes, now });
      crashTimes = [...recentCrashes(crashTimes, now), now];
      file.write(`[stack] ${name} exited (${describeExit(cause)})\n`);
      if (decision.action === 'restart') {
        pendingRestart = setTimeout(() => {
          pendingRestart = undefined;
          if (stopping || shuttingDown) return;
          run();
          log(decision.line);
        }, decision.delayMs);
        return;
      }
      const lastLines = tail.trimEnd().split('\n').slice(-15).join('\n');
      log(`${decision.reason}; its log ${join(logsDir, `${name}.log`)} ends:`);
      process.stdout.write(`${lastLines}\n`);
      log('stopping the stack');
      void shutdown(1);
    });
  };
  run();
  stops.set(
    name,
    () =>
      new Promise<void>((resolveStop) => {
        stopping = true;
        clearTimeout(pendingRestart);
        if (child.exitCode !== null || child.signalCode !== null) return resolveStop();
        child.once('exit', () => resolveStop());
        child.kill('SIGTERM');
        // The worker gives its drain 20 s of its own (workers/runWorker.ts); past that it is stuck.
        setTimeout(() => child.kill('SIGKILL'), 25_000).unref();
      }),
  );
}

/**
 * A dependency the supervisor does not restart: when it exits on its own, the stack stops, saying which
 * and why (`PostgreSQL exited (SIGKILL); not restarted: …`).
 */
function watchDependency(exited: Promise<string>, whyNotRestarted: string): void {
  void exited.then((what) => {
    if (shuttingDown) return;
    log(`${what}; not restarted: ${whyNotRestarted}`);
    log('stopping the stack (`npm start` again starts it afresh)');
    void shutdown(1);
  });
}

/** `.dev/logs/<name>.log`, started afresh on every `npm start`. */
function logFile(name: string): WriteStream {
  return createWriteStream(join(logsDir, `${name}.log`), { flags: 'w' });
}

/**
 * Until `url` answers 2xx. Three minutes: on a busy 2-core machine the first api processes, compiled by
 * tsx while everything else starts, took over a minute to listen (a crash meanwhile is restarted).
 */
async function waitForHealth(url: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await delay(250);
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
}

let shuttingDown = false;
async function shutdown(code: number): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  log('stopping');
  for (const phase of STOP_ORDER) {
    const names = [...stops.keys()].filter((name) => phase.includes(serviceOf(name)));
    await Promise.all(
      names.map(async (name) => {
        const stop = stops.get(name)!;
        try {
          await stop();
          log(`${name} stopped`);
        } catch (error) {
          log(`${name} did not stop cleanly: ${(error as Error).message}`);
        }
      }),
    );
  }
  log('stopped');
  process.exit(code);
}

/** The detached supervisor: runs the stack; stops it when the foreground process asks or goes away. */
function supervise(): void {
  process.on('message', (message: { stop?: boolean }) => {
    if (message.stop) void shutdown(0);
  });
  process.once('disconnect', () => void shutdown(0));
  // A signal sent to the supervisor itself (kill <pid>) stops the stack the same way.
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));
  process.once('SIGHUP', () => void shutdown(0));
  main().catch(async (error: unknown) => {
    process.stderr.write(
      `[stack] failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    await shutdown(1);
  });
}

/**
 * The foreground process: starts the supervisor in a session of its own, turns Ctrl-C (and SIGTERM,
 * SIGHUP) into one stop request, and exits with the supervisor's code once everything has stopped.
 */
function runInForeground(): void {
  const supervisor = spawn(process.execPath, ['--import', 'tsx', __filename, SUPERVISOR_ARGUMENT], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let asked = false;
  const askToStop = () => {
    if (asked) {
      log('still stopping in dependency order (the worker may take up to 20 s to drain)');
      return;
    }
    asked = true;
    if (supervisor.connected) supervisor.send({ stop: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, askToStop);
  supervisor.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.argv.includes(SUPERVISOR_ARGUMENT)) supervise();
else runInForeground();
