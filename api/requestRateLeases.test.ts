import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '../db/client';
import { findFreePort } from '../dev/services/freePort';
import { createLogger } from '../logging/logger';
import { testStack } from '../test/harness/stack';
import { createRequestRates, LEASES_PER_WINDOW } from './requestRateLeases';

/**
 * The shared count behind the service-wide limits, on the run's Postgres: replicas (here three sets of
 * limits in one process, as three api processes would hold) never let through more than the figure per
 * key and minute, and at most (replicas - 1) × lease fewer; without Postgres each counts on its own.
 */
const FIGURE = 40;
const LEASE = Math.ceil(FIGURE / LEASES_PER_WINDOW);
const figures = {
  RATE_LIMIT_LOGIN_PER_MINUTE: FIGURE,
  RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: FIGURE,
  PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: FIGURE,
};
const silent = createLogger({ level: 'silent' });
/** Waits, when needed, so that the next seconds fall inside one minute (the limits' window). */
async function insideOneMinute(): Promise<void> {
  const intoMinuteMs = Date.now() % 60_000;
  if (intoMinuteMs > 45_000) await delay(60_000 - intoMinuteMs + 200);
}

let db: Db;
beforeAll(() => {
  db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 5 });
});
afterAll(() => db?.destroy());

jest.setTimeout(90_000);

it('three replicas taking at once let through the figure, within (replicas - 1) × lease, and the shared count holds exactly the figure', async () => {
  await insideOneMinute();
  const replicas = [1, 2, 3].map(() => createRequestRates({ config: figures, db, logger: silent }));
  const clientId = randomUUID();
  const answers = await Promise.all(
    Array.from({ length: 120 }, (_, index) => replicas[index % 3]!.paymasterClient.take(clientId)),
  );
  const allowed = answers.filter((answer) => answer === undefined).length;
  expect(allowed).toBeLessThanOrEqual(FIGURE);
  expect(allowed).toBeGreaterThanOrEqual(FIGURE - 2 * LEASE);
  // Refused until the next minute.
  for (const retryAfterSec of answers.filter((answer) => answer !== undefined)) {
    expect(retryAfterSec).toBeGreaterThanOrEqual(1);
    expect(retryAfterSec).toBeLessThanOrEqual(60);
  }
  const row = await db
    .selectFrom('request_rate_windows')
    .select('granted')
    .where('limit_key', '=', `paymasterClient:${FIGURE}:${clientId}`)
    .executeTakeFirstOrThrow();
  expect(row.granted).toBe(FIGURE);
});

it('one replica lets through exactly the figure', async () => {
  await insideOneMinute();
  const { login } = createRequestRates({ config: figures, db, logger: silent });
  const ip = `198.51.100.${Math.floor(Math.random() * 250)}-${randomUUID()}`;
  const answers = await Promise.all(Array.from({ length: 60 }, () => login.take(ip)));
  expect(answers.filter((answer) => answer === undefined)).toHaveLength(FIGURE);
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
