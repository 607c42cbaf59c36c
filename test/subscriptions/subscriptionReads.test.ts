import { randomUUID } from 'node:crypto';
import { insertSubscription, type NewSubscription } from '../../db/subscriptions';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';

/** Subscription reads on both route sets (the subscription object of docs/service-contract.md), filters, and another merchant's 404. */
const ROUTE_SETS = [
  { name: 'dashboard (JWT)', base: '/v1/merchants/me/subscriptions', credential: 'jwt' },
  { name: 'API key (SK)', base: '/v1/subscriptions', credential: 'sk' },
] as const;

describe('reading subscriptions', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  async function merchantWithSubscriptions() {
    const merchant = await signInNewMerchant(app);
    const sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    const plan = await app.request('/v1/plans', {
      method: 'POST',
      headers: sk,
      json: { name: 'Monthly', amount: '10', interval: 'month' },
    });
    const stored = (status: NewSubscription['status']): NewSubscription => ({
      id: randomUUID(),
      merchantId: merchant.merchantId,
      planId: plan.body.id,
      status,
      customerAccount: '0x00000000000000000000000000000000000000C1',
      chainId: 84532,
      tokenSymbol: 'USDC',
      tokenAddress: '0x00000000000000000000000000000000000000a1',
      periodAmount: 10_000_000n,
      periodSeconds: 30 * 86_400,
      delegationJson: '{}',
      delegationHash: `0x${randomUUID().replace(/-/g, '')}`,
      currentPeriodStart: new Date('2026-12-01T00:00:00Z'),
      currentPeriodEnd: new Date('2026-12-31T00:00:00Z'),
    });
    const active = (await insertSubscription(app.db, stored('active')))!;
    const trialing = (await insertSubscription(app.db, stored('trialing')))!;
    return { merchant, sk, planId: plan.body.id as string, active, trialing };
  }

  describe.each(ROUTE_SETS)('$name under $base', ({ base, credential }) => {
    it('reads, lists and filters the merchant’s subscriptions', async () => {
      const { merchant, sk, planId, active, trialing } = await merchantWithSubscriptions();
      const headers = credential === 'jwt' ? merchant.auth : sk;
      const read = await app.request(`${base}/${active.id}`, { headers });
      expect(read.status).toBe(200);
      expect(read.body).toEqual({
        id: active.id,
        planId,
        status: 'active',
        customerAccount: '0x00000000000000000000000000000000000000C1',
        chainId: 84532,
        token: 'USDC',
        currentPeriodStart: '2026-12-01T00:00:00.000Z',
        currentPeriodEnd: '2026-12-31T00:00:00.000Z',
        cancelAtPeriodEnd: false,
        canceledAt: null,
        latestSessionId: null,
      });
      const all = await app.request(base, { headers });
      expect(all.body.data.map((row: { id: string }) => row.id).sort()).toEqual(
        [active.id, trialing.id].sort(),
      );
      const trials = await app.request(`${base}?status=trialing&planId=${planId}`, { headers });
      expect(trials.body.data.map((row: { id: string }) => row.id)).toEqual([trialing.id]);
      const otherPlan = await app.request(`${base}?planId=${randomUUID()}`, { headers });
      expect(otherPlan.body.data).toEqual([]);
    });

    it('refuses an unknown status with a field error', async () => {
      const { merchant, sk } = await merchantWithSubscriptions();
      const refused = await app.request(`${base}?status=paused`, {
        headers: credential === 'jwt' ? merchant.auth : sk,
      });
      expect(refused.status).toBe(400);
      expect(refused.body.errors.map((error: { field: string }) => error.field)).toEqual(['status']);
    });

    it("answers 404 for another merchant's subscription and never lists it", async () => {
      const theirs = await merchantWithSubscriptions();
      const mine = await merchantWithSubscriptions();
      const headers = credential === 'jwt' ? mine.merchant.auth : mine.sk;
      const read = await app.request(`${base}/${theirs.active.id}`, { headers });
      expect(read).toMatchObject({ status: 404, body: { message: 'Subscription not found' } });
      const listed = await app.request(base, { headers });
      expect(listed.body.data.map((row: { id: string }) => row.id)).not.toContain(theirs.active.id);
    });
  });
});
