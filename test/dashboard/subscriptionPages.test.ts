import { randomBytes, randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { findSubscriptionById, insertSubscription } from '../../db/subscriptions';
import { launchChromium } from '../checkout/chromium';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import {
  DESKTOP,
  openDashboard,
  openSignedIn,
  PHONE,
  screenshot,
  seriousAccessibilityViolations,
  type DashboardPage,
} from './browser';

/**
 * The dashboard's subscription pages (issue 42) in chromium: Plans (create, with the API's refusal beside
 * the field; the subscribe link to copy; archive after a confirmation), Subscriptions (the status filter)
 * and a subscription (its invoices, the period sessions; cancel at period end and now, each confirmed, a
 * dismissed confirmation changing nothing). Each page at 375 and 1280 px: axe-core without a serious or
 * critical violation, no console error, no foreign request, nothing wider than the screen.
 */
describe('subscription pages of the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  let merchant: SignedInMerchant;
  let planId: string;
  let subscriptionId: string;
  let invoiceId: string;

  beforeAll(async () => {
    // Cancel signals go to task queues no worker serves: the rows are what the pages show.
    [app, browser] = await Promise.all([
      startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: `ds${randomBytes(4).toString('hex')}-` }),
      launchChromium(),
    ]);
    merchant = await signInNewMerchant(app);
    const sk = { authorization: `Bearer ${await createApiKey(app, merchant, 'seeded')}` };
    const plan = await app.request('/v1/plans', {
      method: 'POST',
      headers: sk,
      json: { name: 'Seeded monthly', amount: '12.5', interval: 'month' },
    });
    planId = plan.body.id;
    subscriptionId = randomUUID();
    const now = Date.now();
    await insertSubscription(app.db, {
      id: subscriptionId,
      merchantId: merchant.merchantId,
      planId,
      status: 'active',
      customerAccount: '0x00000000000000000000000000000000000000c1',
      chainId: 84532,
      tokenSymbol: 'USDC',
      tokenAddress: '0x00000000000000000000000000000000000000a1',
      periodAmount: 12_500_000n,
      periodSeconds: 30 * 86_400,
      delegationJson: '{}',
      delegationHash: `0x${randomBytes(32).toString('hex')}`,
      currentPeriodStart: new Date(now - 86_400_000),
      currentPeriodEnd: new Date(now + 29 * 86_400_000),
    });
    // The period's invoice: a session of the merchant's carrying the subscription's id.
    const session = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '12.5', sandboxMode: true },
    });
    invoiceId = session.body.id;
    await app.db
      .updateTable('sessions')
      .set({ subscription_id: subscriptionId })
      .where('id', '=', invoiceId)
      .execute();
    // A plain session is no invoice of it.
    await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '3', sandboxMode: true },
    });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function signedIn(viewport = DESKTOP, path = ''): Promise<DashboardPage> {
    const dashboard = await openDashboard(browser, app, { viewport });
    await openSignedIn(dashboard.page, app.baseUrl, merchant.token, path);
    return dashboard;
  }

  async function settled(dashboard: DashboardPage, heading: string): Promise<void> {
    await dashboard.page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await dashboard.page.waitForFunction(
      () =>
        ![...document.querySelectorAll('[role="status"]')].some((node) =>
          node.textContent?.includes('Loading'),
        ),
    );
  }

  it('creates a plan (refusal beside the field first), copies its link, archives it after confirming', async () => {
    const dashboard = await signedIn(DESKTOP, '/plans');
    const { page } = dashboard;
    await settled(dashboard, 'Plans');
    await page.getByLabel('Name').fill('Weekly tea');
    await page.getByLabel('Amount per period (USD)').fill('-3');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page
      .locator('.field.invalid .field-error')
      .filter({ hasText: /^amount/ })
      .waitFor();
    await page.getByLabel('Amount per period (USD)').fill('3.5');
    expect(await page.getByLabel('Interval', { exact: true }).inputValue()).toBe('month');
    await page.getByLabel('Interval', { exact: true }).selectOption('week');
    await page.getByLabel('Intervals per period').fill('2');
    await page.getByLabel('Trial days').fill('7');
    await page.getByRole('button', { name: 'Create plan' }).click();
    const created = page.getByTestId('plan-created');
    await created.waitFor();
    const plans = (await app.request('/v1/merchants/me/plans', { headers: merchant.auth })).body.data;
    const weekly = plans.find((plan: { name: string }) => plan.name === 'Weekly tea');
    expect(weekly).toMatchObject({ amount: '3.5', interval: 'week', intervalCount: 2, trialDays: 7 });
    expect(await created.locator('code').textContent()).toBe(weekly.subscribeUrl);
    const row = page.getByTestId(`plan-${weekly.id}`);
    await row.getByText('every 2 weeks').waitFor();
    await row.getByRole('button', { name: `Copy link: ${weekly.subscribeUrl}` }).waitFor();

    // Dismissed: nothing archived. Confirmed: archived, shown as such.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await row.getByRole('button', { name: 'Archive Weekly tea' }).click();
    await row.getByRole('button', { name: 'Archive Weekly tea' }).waitFor();
    expect(
      (await app.request(`/v1/merchants/me/plans/${weekly.id}`, { headers: merchant.auth })).body.archived,
    ).toBe(false);
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Archive Weekly tea' }).click();
    await row.getByText('archived').waitFor();
    expect(
      (await app.request(`/v1/merchants/me/plans/${weekly.id}`, { headers: merchant.auth })).body.archived,
    ).toBe(true);
    expect(dashboard.errors).toEqual([]);
    await dashboard.context.close();
  });

  it('filters subscriptions by status, shows one with its invoices and cancels it (at period end, then now)', async () => {
    const dashboard = await signedIn(DESKTOP, '/subscriptions');
    const { page } = dashboard;
    await settled(dashboard, 'Subscriptions');
    const table = page.getByTestId('subscriptions-table');
    await table.getByText('Seeded monthly').waitFor();
    await page.getByRole('button', { name: 'canceled' }).click();
    await page.getByText('No canceled subscriptions.').waitFor();
    await page.getByRole('button', { name: 'active' }).click();
    await table.getByRole('link', { name: '0x0000…00c1' }).click();
    await settled(dashboard, 'Subscription');
    const invoices = page.getByTestId('invoices-table');
    await invoices.getByRole('link', { name: invoiceId.slice(0, 8) }).waitFor();
    expect(await invoices.locator('tbody tr').count()).toBe(1);

    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Cancel now' }).click();
    expect(await findSubscriptionById(app.db, subscriptionId)).toMatchObject({
      status: 'active',
      cancel_at_period_end: false,
    });
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Cancel at period end' }).click();
    await page.getByText('ends at the period’s end').waitFor();
    expect(await findSubscriptionById(app.db, subscriptionId)).toMatchObject({
      status: 'active',
      cancel_at_period_end: true,
    });
    await screenshot(page, 'subscription-ending-1280');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Cancel now' }).click();
    await page.locator('.badge', { hasText: 'canceled' }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel now' }).count()).toBe(0);
    expect((await findSubscriptionById(app.db, subscriptionId))!.status).toBe('canceled');

    // Another merchant's id is nobody's here.
    const other = await signInNewMerchant(app);
    const stranger = await openDashboard(browser, app);
    await openSignedIn(stranger.page, app.baseUrl, other.token, `/subscriptions/${subscriptionId}`);
    await stranger.page.getByText('No subscription of yours has this id.').waitFor();
    expect([...dashboard.errors, ...stranger.errors]).toEqual([]);
    await stranger.context.close();
    await dashboard.context.close();
  });

  for (const viewport of [PHONE, DESKTOP]) {
    it(`shows the plans and subscriptions pages at ${viewport.width} px, accessible, without errors`, async () => {
      const dashboard = await signedIn(viewport);
      const { page } = dashboard;
      for (const entry of [
        { path: '/plans', name: 'plans', heading: 'Plans' },
        { path: '/subscriptions', name: 'subscriptions', heading: 'Subscriptions' },
        { path: `/subscriptions?planId=${planId}`, name: 'subscriptions-of-plan', heading: 'Subscriptions' },
        { path: `/subscriptions/${subscriptionId}`, name: 'subscription', heading: 'Subscription' },
      ]) {
        await page.goto(`${app.baseUrl}/dashboard${entry.path}`);
        await settled(dashboard, entry.heading);
        expect({ page: entry.name, violations: await seriousAccessibilityViolations(page) }).toEqual({
          page: entry.name,
          violations: [],
        });
        await screenshot(page, `${entry.name}-${viewport.width}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect({ page: entry.name, overflow }).toEqual({ page: entry.name, overflow: 0 });
      }
      expect(dashboard.errors).toEqual([]);
      expect(dashboard.foreignRequests).toEqual([]);
      await dashboard.context.close();
    }, 120_000);
  }
});
