import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { answerOrExit, superviseProcess } from './serviceProcess';

/**
 * HAProxy (Debian's `haproxy`, installed by dev/bootstrap.js) in front of more than one api replica,
 * for `npm start` with API_REPLICAS > 1 and the replica tests. docker-compose's `lb` service runs the
 * same rules from lb/haproxy.cfg.
 */

export const HAPROXY_PATH = process.env.HAPROXY_PATH || '/usr/sbin/haproxy';

export interface ApiReplicaAddress {
  name: string;
  host: string;
  port: number;
}

/**
 * The balancer's rules:
 * - each replica is checked every second on `/ready`; two failures take it out (a draining replica
 *   answers 503 at once, and keeps serving for API_DRAIN_MS, longer than the two seconds this takes),
 *   and so does one refused or failed connection (a killed replica is out before its next check);
 * - when no replica is ready (a dependency down everywhere, e.g. Temporal restarting), the live ones
 *   (`/health`) still serve: status polls and reads need only Postgres, and what needs the dependency
 *   fails fast with its own answer, instead of the balancer's 503 for everything;
 * - only what never reached a replica is retried: a refused or failed connection for every request,
 *   a connection closed with no answer only for GET and HEAD (a POST that reached a replica which then
 *   died may have been done: resending it could create a second session or sponsorship);
 * - idle keep-alive connections are closed by the balancer (2 s) long before a replica would close
 *   them (65 s), so a request is never sent on a connection the replica is closing;
 * - the client's address is appended to X-Forwarded-For (the api runs with TRUST_PROXY=1).
 */
export function haproxyConfig({
  bind,
  replicas,
}: {
  /** `host:port` the balancer listens on. */
  bind: string;
  /**
   * The replicas by address (`npm start`, tests), or one DNS name whose addresses are the replicas
   * (docker-compose's `api` service, however many `--scale api=n` runs; up to `slots`).
   */
  replicas: readonly ApiReplicaAddress[] | { dnsName: string; port: number; slots: number };
}): string {
  const byDns = !Array.isArray(replicas);
  const servers = (suffix: string) =>
    'dnsName' in replicas
      ? [
          `  server-template api${suffix}- ${replicas.slots} ${replicas.dnsName}:${replicas.port} check resolvers docker init-addr none`,
        ]
      : replicas.map((replica) => `  server ${replica.name}${suffix} ${replica.host}:${replica.port} check`);
  return `${[
    'global',
    '  maxconn 4096',
    '',
    ...(byDns
      ? [
          // Docker's embedded DNS: a scaled or restarted replica's address is seen within a second.
          'resolvers docker',
          '  nameserver dns 127.0.0.11:53',
          '  hold valid 1s',
          '',
        ]
      : []),
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 65s',
    '  timeout server 65s',
    '  timeout http-request 10s',
    '  timeout http-keep-alive 2s',
    '  timeout queue 10s',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    '  option forwardfor',
    '  http-reuse never',
    // A refused connection takes the replica out at once (its checks bring it back), so a retry is
    // redispatched to a live replica instead of, round-robin under concurrency, to the dead one again.
    '  default-server inter 1s fall 2 rise 2 observe layer4 error-limit 1 on-error mark-down',
    '',
    'frontend api',
    `  bind ${bind}`,
    '  http-request disable-l7-retry if !METH_GET !METH_HEAD',
    '  use_backend live if { nbsrv(ready) eq 0 }',
    '  default_backend ready',
    '',
    'backend ready',
    '  balance roundrobin',
    '  option httpchk',
    '  http-check send meth GET uri /ready',
    '  http-check expect status 200',
    ...servers(''),
    '',
    'backend live',
    '  balance roundrobin',
    '  option httpchk',
    '  http-check send meth GET uri /health',
    '  http-check expect status 200',
    ...servers('-live'),
  ].join('\n')}\n`;
}

export interface RunningHaproxy {
  url: string;
  pid: number;
  /** Resolves once HAProxy exits, stopped or not, with its exit code or signal. */
  exited: Promise<number | string>;
  /** Soft stop (SIGUSR1: stops listening, lets open requests finish), then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** Writes the config to `configFile`, starts HAProxy in the foreground and resolves once it listens. */
export async function startHaproxy({
  host = '127.0.0.1',
  port,
  replicas,
  configFile,
  output,
}: {
  host?: string;
  port: number;
  replicas: readonly ApiReplicaAddress[];
  configFile: string;
  output?: (chunk: Buffer) => void;
}): Promise<RunningHaproxy> {
  if (!existsSync(HAPROXY_PATH))
    throw new Error(
      `HAProxy is not installed at ${HAPROXY_PATH}: run \`node dev/bootstrap.js\` with API_REPLICAS set ` +
        "(it installs Debian's haproxy) or set HAPROXY_PATH",
    );
  await writeFile(configFile, haproxyConfig({ bind: `${host}:${port}`, replicas }));
  const child = spawn(HAPROXY_PATH, ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let kept = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      kept = (kept + chunk.toString('utf8')).slice(-8000);
      output?.(chunk);
    });
  }
  const supervised = superviseProcess(child, { stopTimeoutMs: 10_000 });
  const url = `http://${host}:${port}`;
  const listening = await answerOrExit(supervised, async (signal) => {
    while (!signal.aborted) {
      // Any answer, even the balancer's own 503 before the first check passed, means it listens.
      const answered = await fetch(`${url}/health`, { signal }).then(
        () => true,
        () => false,
      );
      if (answered) return true;
      await delay(100);
    }
    return false;
  });
  if ('exited' in listening) throw new Error(`HAProxy exited (${listening.exited}):\n${kept}`);
  return {
    url,
    pid: child.pid!,
    exited: supervised.exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGUSR1');
      // No timer left behind once it has exited (a test process would wait for it).
      await Promise.race([supervised.exited, delay(10_000, undefined, { ref: false })]);
      await supervised.stop();
    },
  };
}
