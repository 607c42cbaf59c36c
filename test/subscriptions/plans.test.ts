import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';

/** Subscription plans on both route sets, against the real app and database. */
const ROUTE_SETS = [
  { name: 'dashboard (JWT)', base: '/v1/merchants/me/plans', credential: 'jwt' },
  { name: 'API key (SK)', base: '/v1/plans', credential: 'sk' },
] as const;

interface Merchant extends SignedInMerchant {
  sk: { authorization: string };
}

describe('subscription plans', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  async function newMerchant(): Promise<Merchant> {
    const merchant = await signInNewMerchant(app);
    return { ...merchant, sk: { authorization: `Bearer ${await createApiKey(app, merchant)}` } };
  }

  describe.each(ROUTE_SETS)('$name under $base', ({ base, credential }) => {
    let merchant: Merchant;
    let headers: Record<string, string>;
    beforeAll(async () => {
      merchant = await newMerchant();
      headers = credential === 'jwt' ? merchant.auth : merchant.sk;
    });

    it('creates a plan with defaults, reads it, lists it and archives it', async () => {
      const created = await app.request(base, {
        method: 'POST',
        headers,
        json: { name: 'Pro', amount: '9.990', interval: 'month' },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        name: 'Pro',
        amount: '9.99',
        interval: 'month',
        intervalCount: 1,
        trialDays: 0,
        subscribeUrl: `${app.config.PUBLIC_BASE_URL}/subscribe/${created.body.id}`,
        archived: false,
        archivedAt: null,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      const row = await app.db
        .selectFrom('subscription_plans')
        .selectAll()
        .where('id', '=', created.body.id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ merchant_id: merchant.merchantId, amount: '9.990000', interval_count: 1 });

      const read = await app.request(`${base}/${created.body.id}`, { headers });
      expect(read).toMatchObject({ status: 200, body: created.body });

      const listed = await app.request(base, { headers });
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((plan: { id: string }) => plan.id)).toContain(created.body.id);

      const archived = await app.request(`${base}/${created.body.id}/archive`, { method: 'POST', headers });
      expect(archived.status).toBe(200);
      expect(archived.body).toMatchObject({ id: created.body.id, archived: true });
      const again = await app.request(`${base}/${created.body.id}/archive`, { method: 'POST', headers });
      expect(again.body.archivedAt).toBe(archived.body.archivedAt);
    });

    it('keeps a weekly count and a trial', async () => {
      const created = await app.request(base, {
        method: 'POST',
        headers,
        json: { name: 'Fortnightly', amount: '5', interval: 'week', intervalCount: 2, trialDays: 14 },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ interval: 'week', intervalCount: 2, trialDays: 14, amount: '5' });
    });

    it.each([
      [{ amount: '1', interval: 'month' }, 'name'],
      [{ name: 'x', amount: '0', interval: 'month' }, 'amount'],
      [{ name: 'x', amount: '1.1234567', interval: 'month' }, 'amount'],
      [{ name: 'x', amount: 1, interval: 'month' }, 'amount'],
      [{ name: 'x', amount: '1', interval: 'year' }, 'interval'],
      [{ name: 'x', amount: '1', interval: 'day', intervalCount: 13 }, 'intervalCount'],
      [{ name: 'x', amount: '1', interval: 'day', intervalCount: 0 }, 'intervalCount'],
      [{ name: 'x', amount: '1', interval: 'day', trialDays: 91 }, 'trialDays'],
      [{ name: 'x', amount: '1', interval: 'day', trialDays: 1.5 }, 'trialDays'],
    ])('refuses %j with a field error on %s and writes nothing', async (json, field) => {
      const before = await countPlans(merchant.merchantId);
      const refused = await app.request(base, { method: 'POST', headers, json });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/^Validation failed: /);
      expect(refused.body.errors.map((error: { field: string }) => error.field)).toContain(field);
      expect(await countPlans(merchant.merchantId)).toBe(before);
    });

    it("answers 404 for another merchant's plan, on read and archive, and leaves it unarchived", async () => {
      const other = await newMerchant();
      const foreign = await app.request('/v1/plans', {
        method: 'POST',
        headers: other.sk,
        json: { name: 'Theirs', amount: '3', interval: 'day' },
      });
      expect(foreign.status).toBe(201);
      const read = await app.request(`${base}/${foreign.body.id}`, { headers });
      expect(read).toMatchObject({ status: 404, body: { message: 'Plan not found' } });
      const archive = await app.request(`${base}/${foreign.body.id}/archive`, { method: 'POST', headers });
      expect(archive).toMatchObject({ status: 404, body: { message: 'Plan not found' } });
      const listed = await app.request(base, { headers });
      expect(listed.body.data.map((plan: { id: string }) => plan.id)).not.toContain(foreign.body.id);
      const theirs = await app.request(`/v1/plans/${foreign.body.id}`, { headers: other.sk });
      expect(theirs.body.archived).toBe(false);
    });
  });

  async function countPlans(merchantId: string): Promise<number> {
    const { count } = await app.db
      .selectFrom('subscription_plans')
      .where('merchant_id', '=', merchantId)
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(count);
  }
});
