import { randomUUID } from 'node:crypto';
import { LEASES_PER_FIGURE } from '../../api/requestRateLeases';
import { apiProcessEnv } from '../harness/apiProcessEnv';
import { startApiReplicas, type ApiReplicas } from '../harness/apiReplicas';
import { requestAt } from '../harness/projectProcess';

/**
 * Rate limits are figures for the whole service whatever the replica count (issue 31): with one api
 * process and with three behind HAProxy, a burst of public status polls gets the configured figure through
 * (plus what the bucket refills meanwhile, the figure a minute), within the recorded error bound
 * (docs/decisions.md, "Service-wide rate limits"): never more, and at most (replicas - 1) × lease fewer.
 */
const FIGURE = 60;
const LEASE = Math.ceil(FIGURE / LEASES_PER_FIGURE);
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

/** Tokens the shared bucket refilled since `startedAt` (the figure a minute): the most it may add. */
const refilledSince = (startedAt: number) => Math.ceil(((Date.now() - startedAt) * FIGURE) / 60_000);

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

it('one api process lets the figure through at once, and then the figure a minute', async () => {
  // Straight to one replica, as its own client IP (the replicas trust one proxy hop).
  const startedAt = Date.now();
  const statuses = await poll(service.replicas[0]!.url, { 'x-forwarded-for': '198.51.100.77' });
  process.stdout.write(`one replica: ${JSON.stringify(statuses)} (figure ${FIGURE})\n`);
  expect(statuses[404]).toBeGreaterThanOrEqual(FIGURE);
  expect(statuses[404]).toBeLessThanOrEqual(FIGURE + refilledSince(startedAt));
  expect((statuses[404] ?? 0) + (statuses[429] ?? 0)).toBe(REQUESTS);
}, 120_000);

it('three api processes behind HAProxy let the figure through, within (replicas - 1) × lease', async () => {
  const startedAt = Date.now();
  const statuses = await poll(service.url);
  process.stdout.write(`three replicas: ${JSON.stringify(statuses)} (figure ${FIGURE}, lease ${LEASE})\n`);
  expect(statuses[404]).toBeLessThanOrEqual(FIGURE + refilledSince(startedAt));
  expect(statuses[404]).toBeGreaterThanOrEqual(FIGURE - 2 * LEASE);
  expect((statuses[404] ?? 0) + (statuses[429] ?? 0)).toBe(REQUESTS);
}, 120_000);
