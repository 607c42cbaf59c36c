import { randomUUID } from 'node:crypto';
import { markChargeFailed, markChargeRedeemed, openPeriodCharge } from '../../db/subscriptionCharges';
import {
  findMerchantSubscription,
  insertSubscription,
  listMerchantSubscriptions,
  type NewSubscription,
} from '../../db/subscriptions';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';

/**
 * The stored side of a subscription's charges (issue 42): one charge row per period whoever opens it,
 * opened before any redemption; a redeemed charge keeps its first transaction and never turns failed;
 * another merchant's subscription reads as unknown; one subscription per signed delegation.
 */
describe('subscription charges in the database', () => {
  let app: TestApp;
  let merchantId: string;
  let sk: { authorization: string };
  let planId: string;

  beforeAll(async () => {
    app = await startTestApp();
    const merchant = await signInNewMerchant(app);
    merchantId = merchant.merchantId;
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    const plan = await app.request('/v1/plans', {
      method: 'POST',
      headers: sk,
      json: { name: 'Monthly', amount: '10', interval: 'month' },
    });
    planId = plan.body.id;
  });
  afterAll(() => app.close());

  const subscription = (overrides: Partial<NewSubscription> = {}): NewSubscription => ({
    id: randomUUID(),
    merchantId,
    planId,
    status: 'active',
    customerAccount: '0x00000000000000000000000000000000000000c1',
    chainId: 84532,
    tokenSymbol: 'USDC',
    tokenAddress: '0x00000000000000000000000000000000000000a1',
    periodAmount: 10_000_000n,
    periodSeconds: 30 * 86_400,
    delegationJson: '{}',
    delegationHash: `0x${randomUUID().replace(/-/g, '')}`,
    currentPeriodStart: new Date('2026-12-01T00:00:00Z'),
    currentPeriodEnd: new Date('2026-12-31T00:00:00Z'),
    ...overrides,
  });

  async function newSession(): Promise<string> {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '10' },
    });
    expect(created.status).toBe(201);
    return created.body.id;
  }

  it('opens one charge per period, however many open it at once', async () => {
    const stored = (await insertSubscription(app.db, subscription()))!;
    const sessionIds = await Promise.all([newSession(), newSession(), newSession()]);
    const opened = await Promise.all(
      sessionIds.map((sessionId) =>
        openPeriodCharge(app.db, { subscriptionId: stored.id, periodIndex: 0, sessionId }),
      ),
    );
    expect(opened.filter((result) => result.opened)).toHaveLength(1);
    expect(new Set(opened.map((result) => result.charge.id)).size).toBe(1);
    const rows = await app.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', stored.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ period_index: 0, status: 'pending', tx_hash: null });

    const next = await openPeriodCharge(app.db, {
      subscriptionId: stored.id,
      periodIndex: 1,
      sessionId: sessionIds[0]!,
    });
    expect(next.opened).toBe(true);
  });

  it('keeps the first redemption and never turns a redeemed charge failed', async () => {
    const stored = (await insertSubscription(app.db, subscription()))!;
    const { charge } = await openPeriodCharge(app.db, {
      subscriptionId: stored.id,
      periodIndex: 0,
      sessionId: await newSession(),
    });
    const failed = await markChargeFailed(app.db, charge.id, 'balance too low');
    expect(failed).toMatchObject({ status: 'failed', failed_attempts: 1, failure_reason: 'balance too low' });
    const redeemed = await markChargeRedeemed(app.db, charge.id, '0xaaaa');
    expect(redeemed).toMatchObject({ status: 'redeemed', tx_hash: '0xaaaa', failure_reason: null });
    expect(await markChargeRedeemed(app.db, charge.id, '0xbbbb')).toMatchObject({ tx_hash: '0xaaaa' });
    expect(await markChargeFailed(app.db, charge.id, 'late failure')).toBeUndefined();
  });

  it('backs one subscription per signed delegation', async () => {
    const first = subscription();
    expect(await insertSubscription(app.db, first)).toBeDefined();
    expect(
      await insertSubscription(app.db, { ...subscription(), delegationHash: first.delegationHash }),
    ).toBeUndefined();
  });

  it("reads another merchant's subscription as unknown and lists only the merchant's own", async () => {
    const stored = (await insertSubscription(app.db, subscription()))!;
    const other = await signInNewMerchant(app);
    expect(await findMerchantSubscription(app.db, other.merchantId, stored.id)).toBeUndefined();
    expect(await listMerchantSubscriptions(app.db, other.merchantId)).toEqual([]);
    expect(await findMerchantSubscription(app.db, merchantId, stored.id)).toMatchObject({ id: stored.id });
    const mine = await listMerchantSubscriptions(app.db, merchantId, { planId, status: 'active' });
    expect(mine.map((row) => row.id)).toContain(stored.id);
    expect(await listMerchantSubscriptions(app.db, merchantId, { status: 'past_due' })).toEqual([]);
  });
});
