import { sql } from 'kysely';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * Security review II, finding 6: every vault deploy costs the platform about 2.55M gas, so a merchant may
 * queue only so many per UTC day, and a failed set is not redeployed at once. Both refusals are 429 with
 * Retry-After and change nothing. (That deploys are paid by an account apart from settlement is held by
 * config/index.test.ts and the worker's wiring.)
 */
const BASE = '/v1/merchants/me/yield-deployments';
const DAILY_LIMIT = 3;
const BACKOFF_SEC = 600;

let world: YieldWorld;

beforeAll(async () => {
  world = await startYieldWorld({
    env: {
      YIELD_DEPLOYS_PER_MERCHANT_PER_DAY: String(DAILY_LIMIT),
      YIELD_REDEPLOY_BACKOFF_SEC: String(BACKOFF_SEC),
    },
  });
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

const call = (merchant: SignedInMerchant, method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

async function createDraft(merchant: SignedInMerchant, name: string): Promise<string> {
  const created = await call(merchant, 'POST', '', { name, chainId: YIELD_CHAIN });
  expect(created.status).toBe(201);
  return created.body.id;
}

const secondsToNextUtcDay = () => {
  const now = new Date();
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
};

it('finding 6 — a merchant queues at most YIELD_DEPLOYS_PER_MERCHANT_PER_DAY deploys per UTC day: concurrent requests never overshoot, the rest get 429 with Retry-After until the next UTC day and stay drafts; another merchant is unaffected', async () => {
  const alice = await signInNewMerchant(world.app);
  const drafts = [];
  for (let index = 0; index < DAILY_LIMIT + 3; index += 1)
    drafts.push(await createDraft(alice, `Alice ${index}`));

  const answers = await Promise.all(drafts.map((id) => call(alice, 'POST', `/${id}/deploy`)));
  expect(answers.map((answer) => answer.status).sort()).toEqual([
    ...Array(DAILY_LIMIT).fill(202),
    ...Array(3).fill(429),
  ]);
  for (const refused of answers.filter((answer) => answer.status === 429)) {
    expect(refused.body.message).toBe(
      `Too many vault deploys today: ${DAILY_LIMIT} per merchant per UTC day; retry after the UTC day ends`,
    );
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Math.abs(retryAfter - secondsToNextUtcDay())).toBeLessThan(60);
  }
  const refusedIds = drafts.filter((_, index) => answers[index]!.status === 429);
  for (const id of refusedIds) {
    expect((await call(alice, 'GET', `/${id}`)).body).toMatchObject({ status: 'draft', failureReason: null });
  }
  const queuedIds = drafts.filter((_, index) => answers[index]!.status === 202);
  for (const id of queuedIds) {
    await waitFor(
      async () => (await call(alice, 'GET', `/${id}`)).body.status,
      (status) => status === 'active',
    );
  }

  const bob = await signInNewMerchant(world.app);
  expect((await call(bob, 'POST', `/${await createDraft(bob, 'Bob')}/deploy`)).status).toBe(202);
}, 180_000);

it('finding 6 — a failed deployment may not be deployed again within YIELD_REDEPLOY_BACKOFF_SEC of its failure (429 with Retry-After), and may after it', async () => {
  const carol = await signInNewMerchant(world.app);
  const id = await createDraft(carol, 'Carol');
  world.breakStakedVault(YIELD_CHAIN, true);
  try {
    expect((await call(carol, 'POST', `/${id}/deploy`)).status).toBe(202);
    await waitFor(
      async () => (await call(carol, 'GET', `/${id}`)).body.status,
      (status) => status === 'failed',
    );
  } finally {
    world.breakStakedVault(YIELD_CHAIN, false);
  }

  const refused = await call(carol, 'POST', `/${id}/deploy`);
  expect(refused.status).toBe(429);
  expect(refused.body.message).toMatch(/^Yield deployment failed less than 600 s ago; retry after \d+ s$/);
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(BACKOFF_SEC - 60);
  expect(retryAfter).toBeLessThanOrEqual(BACKOFF_SEC);
  expect((await call(carol, 'GET', `/${id}`)).body).toMatchObject({
    status: 'failed',
    failureReason: expect.stringMatching(/^deployment reverted/),
  });

  // The back-off has passed.
  await sql`UPDATE yield_deployments SET failed_at = failed_at - make_interval(secs => ${BACKOFF_SEC}) WHERE id = ${id}`.execute(
    world.app.db,
  );
  const again = await call(carol, 'POST', `/${id}/deploy`);
  expect(again.status).toBe(202);
  expect(
    (
      await waitFor(
        async () => (await call(carol, 'GET', `/${id}`)).body,
        (body) => body.status !== 'deploying',
      )
    ).status,
  ).toBe('active');
}, 180_000);
