import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { findFreePort } from '../../dev/services/freePort';
import { apiProcessEnv } from '../harness/apiProcessEnv';
import { ProjectProcess, requestAt, until } from '../harness/projectProcess';

/**
 * Graceful stop of real api and worker processes (issue 31): on SIGTERM an api answers /ready 503 at
 * once, keeps serving through the drain period, then closes idle keep-alive connections, lets the
 * requests in flight finish and exits 0 — or cuts them at the deadline. A worker stops polling and
 * exits 0 once its tasks are done.
 */

/** A raw HTTP/1.1 connection: what arrived so far, and whether the server closed it. */
class RawConnection {
  received = '';
  closedAt?: number;
  private readonly socket: Socket;
  readonly connected: Promise<void>;
  constructor(baseUrl: string) {
    const { hostname, port } = new URL(baseUrl);
    this.socket = connect(Number(port), hostname);
    this.connected = new Promise((resolve) => this.socket.once('connect', () => resolve()));
    this.socket.on('data', (chunk) => (this.received += chunk.toString('utf8')));
    this.socket.on('close', () => (this.closedAt ??= Date.now()));
    this.socket.on('error', () => undefined);
  }
  write(text: string): void {
    this.socket.write(text);
  }
  destroy(): void {
    this.socket.destroy();
  }
}

function exitOf(process: ProjectProcess): Promise<{ code: number | null; at: number }> {
  const child = process.child!;
  if (child.exitCode !== null) return Promise.resolve({ code: child.exitCode, at: Date.now() });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, at: Date.now() })));
}

async function startApi(settings: Record<string, string>): Promise<{ api: ProjectProcess; baseUrl: string }> {
  const port = await findFreePort();
  const api = new ProjectProcess('api/main.ts', await apiProcessEnv({ PORT: String(port), ...settings }));
  const baseUrl = `http://127.0.0.1:${port}`;
  api.start();
  await until(
    async () => (await requestAt(baseUrl, '/ready', {}, 2_000)).status === 200,
    90_000,
    () => api.output,
  );
  return { api, baseUrl };
}

const POST_HEAD = (length: number) =>
  `POST /v1/auth/verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('api graceful stop', () => {
  let api: ProjectProcess | undefined;
  afterEach(async () => {
    await api?.kill();
  });

  it('SIGTERM: /ready 503 at once, served through the drain, idle keep-alive closed after it, in-flight request finished, exit 0', async () => {
    const drainMs = 2_000;
    const started = await startApi({ API_DRAIN_MS: String(drainMs), API_STOP_DEADLINE_MS: '15000' });
    api = started.api;
    const { baseUrl } = started;
    // An idle keep-alive connection (one answered request), and a request still sending its body.
    const idle = new RawConnection(baseUrl);
    await idle.connected;
    idle.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => Promise.resolve(idle.received.includes('\r\n\r\n')), 5_000);
    expect(idle.received).toMatch(/^HTTP\/1\.1 200 /);
    const inFlight = new RawConnection(baseUrl);
    await inFlight.connected;
    inFlight.write(`${POST_HEAD(2)}{`);
    await delay(200);

    const exited = exitOf(api);
    const signalledAt = Date.now();
    api.child!.kill('SIGTERM');
    await delay(100);
    const ready = await requestAt(baseUrl, '/ready', {}, 2_000);
    expect(ready.status).toBe(503);
    expect(ready.text).toContain('api unavailable (stopping)');
    // Still serving new connections while the balancer notices; each answer now closes its connection.
    const health = await requestAt(baseUrl, '/health', {}, 2_000);
    expect(health.status).toBe(200);
    expect(health.headers.get('connection')).toBe('close');
    expect(Date.now() - signalledAt).toBeLessThan(drainMs);

    // After the drain, the idle connection is closed while the request in flight keeps the process up.
    await until(() => Promise.resolve(idle.closedAt !== undefined), drainMs + 5_000);
    expect(idle.closedAt! - signalledAt).toBeGreaterThanOrEqual(drainMs - 100);
    expect(inFlight.closedAt).toBeUndefined();
    expect(api.child!.exitCode).toBeNull();
    await delay(500);
    inFlight.write('}');
    await until(() => Promise.resolve(inFlight.received.includes('\r\n\r\n')), 5_000);
    expect(inFlight.received).toMatch(/^HTTP\/1\.1 400 /);
    expect(inFlight.received.toLowerCase()).toContain('connection: close');

    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - signalledAt).toBeLessThan(15_000);
    expect(api.output).toContain('api stopped');
    inFlight.destroy();
  }, 150_000);

  it('a request that does not finish is cut at the deadline, and the process still exits', async () => {
    const started = await startApi({ API_DRAIN_MS: '500', API_STOP_DEADLINE_MS: '3000' });
    api = started.api;
    const stuck = new RawConnection(started.baseUrl);
    await stuck.connected;
    stuck.write(`${POST_HEAD(10)}{`);
    await delay(200);
    const exited = exitOf(api);
    const signalledAt = Date.now();
    api.child!.kill('SIGTERM');
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - signalledAt).toBeGreaterThanOrEqual(1_900);
    expect(at - signalledAt).toBeLessThan(6_000);
    // The parent may hear of the exit before this process's event loop reads the socket's end: wait for it.
    await until(() => Promise.resolve(stuck.closedAt !== undefined), 2_000);
    expect(stuck.closedAt! - signalledAt).toBeLessThan(6_000);
    expect(stuck.received).toBe('');
    expect(api.output).toContain('connections cut');
  }, 150_000);
});

describe('worker graceful stop', () => {
  let worker: ProjectProcess | undefined;
  afterAll(async () => {
    await worker?.kill();
  });

  it('SIGTERM: stops polling, finishes and exits 0 within its deadline', async () => {
    const env = await apiProcessEnv();
    const readyPort = await findFreePort();
    worker = new ProjectProcess('workers/main.ts', {
      NODE_ENV: 'test',
      DATABASE_URL: env.DATABASE_URL!,
      TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: env.TEMPORAL_NAMESPACE!,
      // Its own task queues: it must not take the run's other tests' tasks.
      TEMPORAL_TASK_QUEUE_PREFIX: `stop-${process.pid}-`,
      DEPLOYMENTS_FILE: env.DEPLOYMENTS_FILE!,
      WORKER_READY_PORT: String(readyPort),
      WORKER_STOP_DEADLINE_MS: '20000',
    });
    worker.start();
    await worker.waitForOutput(/worker polling/, 150_000);
    const readyUrl = `http://127.0.0.1:${readyPort}`;
    await until(async () => (await requestAt(readyUrl, '/ready', {}, 2_000)).status === 200, 30_000);
    const exited = exitOf(worker);
    const signalledAt = Date.now();
    worker.child!.kill('SIGTERM');
    await worker.waitForOutput(/worker stopping \(SIGTERM\)/, 5_000);
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - signalledAt).toBeLessThan(20_000);
    expect(worker.output).toContain('worker stopped');
  }, 240_000);
});
