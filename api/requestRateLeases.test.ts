import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '../db/client';
import { findFreePort } from '../dev/services/freePort';
import { createLogger } from '../logging/logger';
import { testStack } from '../test/harness/stack';
import { createRequestRates, LEASES_PER_FIGURE } from './requestRateLeases';

/**
 * The shared count behind the service-wide limits, on the run's Postgres: replicas (here three sets of
 * limits in one process, as three api processes would hold) never let through more than the figure per
 * key (a burst of the figure, then the figure a minute), and at most (replicas - 1) × lease fewer; without
 * Postgres each counts on its own.
 */
const FIGURE = 40;
const LEASE = Math.ceil(FIGURE / LEASES_PER_FIGURE);
const figures = {
  RATE_LIMIT_LOGIN_PER_MINUTE: FIGURE,
  RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: FIGURE,
  PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: FIGURE,
  PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE: FIGURE,
  YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE: FIGURE,
};
const silent = createLogger({ level: 'silent' });
/** Tokens the shared bucket refills while a test runs (the figure a minute): the most it may add. */
const refilledSince = (startedAt: number) => Math.ceil(((Date.now() - startedAt) * FIGURE) / 60_000);

let db: Db;
beforeAll(() => {
  db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 5 });
});
afterAll(() => db?.destroy());

jest.setTimeout(90_000);

it('three replicas taking at once let through the figure, within (replicas - 1) × lease', async () => {
  const replicas = [1, 2, 3].map(() => createRequestRates({ config: figures, db, logger: silent }));
  const clientId = randomUUID();
  const startedAt = Date.now();
  const answers = await Promise.all(
    Array.from({ length: 120 }, (_, index) => replicas[index % 3]!.paymasterClient.take(clientId)),
  );
  const allowed = answers.filter((answer) => answer === undefined).length;
  expect(allowed).toBeLessThanOrEqual(FIGURE + refilledSince(startedAt));
  expect(allowed).toBeGreaterThanOrEqual(FIGURE - 2 * LEASE);
  // Refused until a token is back: 60 s / 40 a minute = 1.5 s.
  for (const retryAfterSec of answers.filter((answer) => answer !== undefined)) {
    expect(retryAfterSec).toBeGreaterThanOrEqual(1);
    expect(retryAfterSec).toBeLessThanOrEqual(2);
  }
});

it('one replica lets through exactly the figure at once', async () => {
  const { login } = createRequestRates({ config: figures, db, logger: silent });
  const ip = `198.51.100.${Math.floor(Math.random() * 250)}-${randomUUID()}`;
  const startedAt = Date.now();
  const answers = await Promise.all(Array.from({ length: 60 }, () => login.take(ip)));
  const allowed = answers.filter((answer) => answer === undefined).length;
  expect(allowed).toBeGreaterThanOrEqual(FIGURE);
  expect(allowed).toBeLessThanOrEqual(FIGURE + refilledSince(startedAt));
});

it('without Postgres a replica counts on its own (the figure) and warns once', async () => {
  const lines: string[] = [];
  const logger = createLogger(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  const unreachable = createDb({
    connectionString: `postgres://postgres@127.0.0.1:${await findFreePort()}/postgres`,
    acquireTimeoutMs: 500,
  });
  try {
    const { publicSession } = createRequestRates({ config: figures, db: unreachable, logger });
    const answers: (number | undefined)[] = [];
    for (let request = 0; request < FIGURE + 5; request++)
      answers.push(await publicSession.take('203.0.113.9'));
    expect(answers.filter((answer) => answer === undefined)).toHaveLength(FIGURE);
    expect(lines.filter((line) => line.includes('counting on this replica alone'))).toHaveLength(1);
  } finally {
    await unreachable.destroy();
  }
}, 90_000);
