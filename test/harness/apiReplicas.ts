import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../dev/services/freePort';
import { startHaproxy, type RunningHaproxy } from '../../dev/services/haproxy';
import { ProjectProcess, requestAt, until } from './projectProcess';

/** One api replica: its process and its own address (the balancer's is `ApiReplicas.url`). */
export interface ApiReplica {
  name: string;
  process: ProjectProcess;
  port: number;
  url: string;
  /** Starts the process again (after a stop or kill) and resolves once it is ready. */
  restart(): Promise<void>;
}

export interface ApiReplicas {
  /** The balancer in front of every replica. */
  url: string;
  replicas: ApiReplica[];
  balancer: RunningHaproxy;
  /** A mark in the balancer's log: take it before a fault, then wait with `untilTakenBack`. */
  balancerLogMark(): number;
  /**
   * Resolves once the balancer, after `mark`, has put `replica` back into the ready backend: HAProxy
   * prints each server's state change in the foreground (`Server ready/api-1 is UP`), so this is its
   * own view, not a guess from a delay. A replica it never took out counts as back at once.
   */
  untilTakenBack(replica: ApiReplica, mark: number, withinMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Resolves once `url`/ready answers 200 (the process started and reached its dependencies). */
export async function untilReady(url: string, process: ProjectProcess, withinMs = 120_000): Promise<void> {
  await until(
    async () => (await requestAt(url, '/ready', {}, 3_000)).status === 200,
    withinMs,
    () => process.output,
  );
}

/**
 * `count` real `api/main.ts` processes, each on its own port with `env`, behind HAProxy with the rules
 * `npm start` uses (dev/services/haproxy.ts). Resolves once every replica is ready and the balancer
 * routes to them.
 */
export async function startApiReplicas(count: number, env: Record<string, string>): Promise<ApiReplicas> {
  const balancerPort = await findFreePort();
  // One public address for every replica (login payloads name it; a payload from one replica verifies on another).
  const shared = { PUBLIC_BASE_URL: `http://127.0.0.1:${balancerPort}`, ...env };
  const replicas: ApiReplica[] = [];
  for (let index = 1; index <= count; index++) {
    const port = await findFreePort();
    const process = new ProjectProcess('api/main.ts', { ...shared, PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    replicas.push({
      name: `api-${index}`,
      process,
      port,
      url,
      async restart() {
        process.start();
        await untilReady(url, process);
      },
    });
  }
  for (const replica of replicas) replica.process.start();
  await Promise.all(replicas.map((replica) => untilReady(replica.url, replica.process)));
  let balancerLog = '';
  const balancer = await startHaproxy({
    port: balancerPort,
    replicas: replicas.map(({ name, port }) => ({ name, host: '127.0.0.1', port })),
    configFile: join(await mkdtemp(join(tmpdir(), 'stablepay-haproxy-')), 'haproxy.cfg'),
    output: (chunk) => {
      balancerLog += chunk.toString('utf8');
    },
  });
  // Ready once the balancer's checks (every second, two in a row) have taken every replica in.
  await until(async () => (await requestAt(balancer.url, '/ready', {}, 3_000)).status === 200, 30_000);
  return {
    url: balancer.url,
    replicas,
    balancer,
    balancerLogMark: () => balancerLog.length,
    async untilTakenBack(replica, mark, withinMs = 60_000) {
      const lastState = () => {
        const changes = [...balancerLog.slice(mark).matchAll(/Server ready\/(\S+) is (UP|DOWN)/g)];
        return changes.filter((change) => change[1] === replica.name).at(-1)?.[2];
      };
      await until(
        async () => (lastState() ?? 'UP') === 'UP',
        withinMs,
        () => balancerLog.slice(-4000),
      );
    },
    async stop() {
      await balancer.stop();
      await Promise.all(replicas.map((replica) => replica.process.kill('SIGKILL')));
    },
  };
}
