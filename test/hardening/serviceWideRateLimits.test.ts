import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { LEASES_PER_WINDOW } from '../../api/requestRateLeases';
import { apiProcessEnv } from '../harness/apiProcessEnv';
import { startApiReplicas, type ApiReplicas } from '../harness/apiReplicas';
import { requestAt } from '../harness/projectProcess';

/**
 * Rate limits are figures for the whole service whatever the replica count (issue 31): with one api
 * process and with three behind HAProxy, the public status polls let through in a minute are the
 * configured figure, within the recorded error bound (docs/decisions.md, "Service-wide rate limits"):
 * never more, and at most (replicas - 1) × lease fewer.
 */
const FIGURE = 60;
const LEASE = Math.ceil(FIGURE / LEASES_PER_WINDOW);
const REQUESTS = 150;

let service: ApiReplicas;

beforeAll(async () => {
  service = await startApiReplicas(
    3,
    await apiProcessEnv({ RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: String(FIGURE), LOG_LEVEL: 'warn' }),
  );
}, 240_000);

afterAll(async () => {
  await service?.stop();
});

/** Waits, when needed, so that the next few seconds fall inside one minute (the limit's window). */
async function insideOneMinute(): Promise<void> {
  const intoMinuteMs = Date.now() % 60_000;
  if (intoMinuteMs > 45_000) await delay(60_000 - intoMinuteMs + 200);
}

/** REQUESTS status polls, ten at a time; how many were let through (404: unknown session) and refused (429). */
async function poll(baseUrl: string, headers: Record<string, string> = {}): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  const id = randomUUID();
  for (let sent = 0; sent < REQUESTS; sent += 10) {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => requestAt(baseUrl, `/v1/sessions/${id}/status`, { headers })),
    );
    for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return statuses;
}

it('one api process lets exactly the figure through in a minute', async () => {
  await insideOneMinute();
  // Straight to one replica, as its own client IP (the replicas trust one proxy hop).
  const statuses = await poll(service.replicas[0]!.url, { 'x-forwarded-for': '198.51.100.77' });
  expect(statuses).toEqual({ 404: FIGURE, 429: REQUESTS - FIGURE });
}, 120_000);

it('three api processes behind HAProxy let the figure through, within (replicas - 1) × lease', async () => {
  await insideOneMinute();
  const statuses = await poll(service.url);
  process.stdout.write(`three replicas: ${JSON.stringify(statuses)} (figure ${FIGURE}, lease ${LEASE})\n`);
  expect(statuses[404]).toBeLessThanOrEqual(FIGURE);
  expect(statuses[404]).toBeGreaterThanOrEqual(FIGURE - 2 * LEASE);
  expect((statuses[404] ?? 0) + (statuses[429] ?? 0)).toBe(REQUESTS);
}, 120_000);
