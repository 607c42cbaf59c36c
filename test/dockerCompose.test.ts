import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../config';
import { haproxyConfig } from '../dev/services/haproxy';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../workers/processMemory';

const root = join(__dirname, '..');
interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  restart?: string;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }> | string[];
}
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const appServices = ['api', 'worker', 'signer'];

describe('docker-compose.yml', () => {
  it('defines postgres, temporal, its UI and the application processes', () => {
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(['postgres', 'temporal', 'temporal-ui', 'lb', ...appServices]),
    );
  });

  it.each(appServices)('%s sets only variables the config module knows, and they validate', (service) => {
    const environment = compose.services[service]!.environment ?? {};
    expect(Object.keys(environment).length).toBeGreaterThan(0);
    // The worker's memory settings are read by glibc, not by the config module (workers/processMemory.ts).
    const runtimeVariables: string[] = service === 'worker' ? Object.keys(WORKER_PROCESS_ENV) : [];
    for (const variable of Object.keys(environment))
      if (!runtimeVariables.includes(variable)) expect(CONFIG_VARIABLES).toContain(variable);
    // ${VAR:-default} interpolation resolves to the default when the host does not set VAR; ${VAR:?why}
    // is required from the host (here a sample value).
    const resolved = Object.fromEntries(
      Object.entries(environment).map(([name, value]) => [
        name,
        String(value)
          .replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1')
          .replace(/\$\{PUBLIC_BASE_URL:\?[^}]*\}/g, 'https://pay.example.com')
          .replace(/\$\{[A-Z0-9_]+:\?[^}]*\}/g, 'sample-value'),
      ]),
    );
    expect(() => loadConfig(resolved)).not.toThrow();
  });

  it('starts the worker with its memory settings (workers/processMemory.ts)', () => {
    const worker = compose.services.worker!;
    expect(worker.command).toEqual(['node', ...WORKER_NODE_FLAGS, 'dist/workers/main.js']);
    expect(worker.environment).toEqual(expect.objectContaining(WORKER_PROCESS_ENV));
  });

  it.each(['postgres', 'temporal', 'temporal-ui'])(
    '%s is published on this host’s loopback only',
    (service) => {
      const ports = compose.services[service]!.ports ?? [];
      expect(ports.length).toBeGreaterThan(0);
      for (const port of ports) expect(port).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    },
  );

  it('has no default database password: the host must set POSTGRES_PASSWORD', () => {
    const text = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
    const uses = [...text.matchAll(/\$\{POSTGRES_PASSWORD([^}]*)\}/g)].map((match) => match[1]);
    expect(uses.length).toBeGreaterThanOrEqual(3);
    for (const use of uses) expect(use).toMatch(/^:\?/);
    expect(compose.services.postgres!.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    expect(compose.services.api!.environment!.DATABASE_URL).toContain('${POSTGRES_PASSWORD:?');
  });

  it('publishes only the balancer: the api has no host port and scales behind `lb` (HAProxy, lb/haproxy.cfg)', () => {
    const lb = compose.services.lb as { image?: string; ports?: string[]; volumes?: string[] };
    expect(lb.image).toMatch(/^haproxy:/);
    expect(lb.ports).toEqual(['3000:3000']);
    expect(lb.volumes).toContain('./lb/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
    expect(compose.services.api!.ports).toBeUndefined();
    expect(compose.services.api!.environment!.TRUST_PROXY).toBe('1');
    const text = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
    expect(text).toContain('--scale api=3 --scale worker=2');
  });

  it('lb/haproxy.cfg is the rules npm start uses, over the `api` service name', () => {
    const file = readFileSync(join(root, 'lb', 'haproxy.cfg'), 'utf8');
    const rules = haproxyConfig({ bind: ':3000', replicas: { dnsName: 'api', port: 3000, slots: 10 } });
    expect(
      file
        .split('\n')
        .filter((line) => !line.startsWith('#'))
        .join('\n'),
    ).toBe(rules);
  });

  it('passes an RPC and a bundler URL for each of the six networks', () => {
    const environment = compose.services.api!.environment!;
    for (const chainId of [1, 8453, 42161, 11155111, 84532, 421614]) {
      expect(environment[`RPC_URL_${chainId}`]).toBe(`\${RPC_URL_${chainId}:-}`);
      expect(environment[`BUNDLER_URL_${chainId}`]).toBe(`\${BUNDLER_URL_${chainId}:-}`);
    }
  });

  it('gives the api and the worker longer than their stop deadlines before docker kills them', () => {
    const grace = (service: string) =>
      (compose.services[service] as { stop_grace_period?: string }).stop_grace_period;
    expect(grace('api')).toBe('30s');
    expect(grace('worker')).toBe('30s');
    expect(Number(compose.services.api!.environment!.API_STOP_DEADLINE_MS)).toBeLessThan(30_000);
    expect(Number(compose.services.worker!.environment!.WORKER_STOP_DEADLINE_MS)).toBeLessThan(30_000);
  });

  it('restarts every long-running service that exits, unless an operator stopped it', () => {
    for (const [name, service] of Object.entries(compose.services))
      expect([name, service.restart]).toEqual([name, 'unless-stopped']);
  });

  it.each([
    ['api', 'PORT', '/ready'],
    ['worker', 'WORKER_READY_PORT', '/ready'],
    ['signer', 'SIGNER_PORT', '/health'],
  ])('%s is healthy when its own %s answers %s', (service, portVariable, path) => {
    const { healthcheck, environment } = compose.services[service]!;
    expect(healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${environment![portVariable]}${path}`);
  });

  it('starts the balancer once the api replicas are healthy, and the processes once Postgres is', () => {
    expect(compose.services.lb!.depends_on).toEqual({ api: { condition: 'service_healthy' } });
    expect(compose.services.postgres!.healthcheck!.test.join(' ')).toContain('pg_isready');
    for (const service of [...appServices, 'temporal'])
      expect(compose.services[service]!.depends_on).toMatchObject({
        postgres: { condition: 'service_healthy' },
      });
  });

  it.each(appServices)('%s runs compiled JavaScript whose source module exists', (service) => {
    const command = compose.services[service]!.command ?? [];
    expect(command[0]).toBe('node');
    const entry = command.find((part) => /^dist\/.+\.js$/.test(part));
    expect(entry).toBeDefined();
    // dist/ mirrors the source tree (dev/buildProduction.ts): dist/api/main.js comes from api/main.ts.
    const source = entry!.replace(/^dist\//, '').replace(/\.js$/, '.ts');
    expect(() => readFileSync(join(root, source))).not.toThrow();
  });
});
