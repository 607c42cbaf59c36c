import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import type { Db } from '../db/client';
import { parseSignerEndpoint } from '../paymaster/rpc/signerEndpoint';
import { createSignerTransport } from '../paymaster/rpc/signerTransport';

/**
 * Readiness: can this process serve right now? Each dependency is checked with a short deadline, all at
 * once, and reported on a line of its own; any failure makes the whole answer not ready (503), so a load
 * balancer or orchestrator stops routing to (or restarts) it. Liveness stays `/health`.
 */
export interface DependencyCheck {
  name: string;
  check: () => Promise<void>;
}

export interface DependencyStatus {
  name: string;
  ok: boolean;
  ms: number;
  /** Why it failed (short, no URLs or secrets). */
  problem?: string;
}

export interface Readiness {
  ready: boolean;
  dependencies: DependencyStatus[];
}

class DeadlineExceeded extends Error {}

async function withinDeadline(check: () => Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DeadlineExceeded()), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function checkReadiness(checks: DependencyCheck[], timeoutMs: number): Promise<Readiness> {
  const dependencies = await Promise.all(
    checks.map(async ({ name, check }): Promise<DependencyStatus> => {
      const started = performance.now();
      try {
        await withinDeadline(check, timeoutMs);
        return { name, ok: true, ms: Math.round(performance.now() - started) };
      } catch (error) {
        const timedOut =
          error instanceof DeadlineExceeded || (error as { name?: string })?.name === 'TimeoutError';
        const problem = timedOut
          ? `no answer within ${timeoutMs} ms`
          : ((error as { name?: string })?.name ?? 'error');
        return { name, ok: false, ms: Math.round(performance.now() - started), problem };
      }
    }),
  );
  return { ready: dependencies.every((dependency) => dependency.ok), dependencies };
}

/** One line per dependency: `postgres ok 3 ms`, `signer unavailable (no answer within 1000 ms)`. */
export function readinessText({ dependencies }: Readiness): string {
  return `${dependencies
    .map((dependency) =>
      dependency.ok
        ? `${dependency.name} ok ${dependency.ms} ms`
        : `${dependency.name} unavailable (${dependency.problem})`,
    )
    .join('\n')}\n`;
}

export const postgresCheck = (db: Db): DependencyCheck => ({
  name: 'postgres',
  check: async () => {
    await sql`select 1`.execute(db);
  },
});

export const temporalCheck = (temporal: Client, timeoutMs: number): DependencyCheck => ({
  name: 'temporal',
  check: async () => {
    await temporal.withDeadline(Date.now() + timeoutMs, () =>
      temporal.connection.workflowService.getSystemInfo({}),
    );
  },
});

/** The signing service answers its unauthenticated `GET /health` (on TCP or its Unix-domain socket). */
export const signerCheck = (signerUrl: string, timeoutMs: number): DependencyCheck => {
  const transport = createSignerTransport({
    endpoint: parseSignerEndpoint(signerUrl),
    headers: {},
    timeoutMs,
  });
  return {
    name: 'signer',
    check: async () => {
      const answer = await transport.health();
      if (!answer.ok)
        throw Object.assign(new Error(answer.message), {
          name: answer.timedOut ? 'TimeoutError' : 'unreachable',
        });
      if (answer.status !== 200)
        throw Object.assign(new Error(`HTTP ${answer.status}`), { name: `HTTP ${answer.status}` });
    },
  };
};

/**
 * The worker's readiness port: `GET /ready` answers 200 or 503 with the lines above, and `GET /metrics`
 * (when given) the Prometheus text; nothing else is served.
 */
export async function startReadinessServer({
  port,
  host = '0.0.0.0',
  readiness,
  metrics,
}: {
  port: number;
  host?: string;
  readiness: () => Promise<Readiness>;
  metrics?: { contentType: string; text(): Promise<string> };
}): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://worker').pathname;
    if (request.method === 'GET' && path === '/metrics' && metrics) {
      metrics.text().then(
        (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n'),
      );
      return;
    }
    if (request.method !== 'GET' || path !== '/ready') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    readiness().then(
      (result) =>
        response
          .writeHead(result.ready ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' })
          .end(readinessText(result)),
      () => response.writeHead(503, { 'content-type': 'text/plain' }).end('readiness check failed\n'),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
