import type { Browser } from 'playwright-core';
import { launchChromium } from '../checkout/chromium';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { createPaymasterClient } from '../paymaster/paymasterApi';
import { DESKTOP, openDashboard, openSignedIn, seriousAccessibilityViolations } from './browser';

/**
 * The dashboard's sponsorship policies (issue 43): a client's policies in order, a new one added, a
 * refused window shown beside its field with nothing saved, an order change and a delete, each as the
 * API then answers it.
 */

const CONTRACT = '0x1000000000000000000000000000000000000001';

describe('dashboard: sponsorship policies', () => {
  let app: TestApp;
  let browser: Browser;
  let merchant: SignedInMerchant;
  beforeAll(async () => {
    [app, browser] = await Promise.all([startTestApp(), launchChromium()]);
    merchant = await signInNewMerchant(app);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('lists, adds, refuses a past window, moves up and deletes a client’s policies', async () => {
    const client = await createPaymasterClient(app, merchant, { label: 'Game' });
    const policies = async () =>
      (await app.request(`/v1/paymaster/clients/${client.id}/policies`, { headers: merchant.auth })).body
        .data as { id: string; name: string }[];
    const dashboard = await openDashboard(browser, app, { viewport: DESKTOP });
    const { page } = dashboard;
    await openSignedIn(page, app.baseUrl, merchant.token, '/paymaster');
    const section = page.getByRole('region', { name: 'Sponsorship policies' });
    await section.getByText('Default policy').waitFor();

    // A window that already ended: the API's 400 beside the Ends field, nothing saved.
    await section.getByLabel('Policy name').fill('Expired');
    await section.getByLabel('Ends (optional)').fill('2020-01-01T00:00');
    await section.getByRole('button', { name: 'Add policy' }).click();
    await section
      .locator('.field.invalid .field-error')
      .filter({ hasText: /future/ })
      .waitFor();
    expect((await policies()).map((policy) => policy.name)).toEqual(['Default policy']);

    await section.getByLabel('Policy name').fill('Launch');
    await section.getByLabel('Ends (optional)').fill('');
    await section.getByLabel('Its own contract (optional)').fill(CONTRACT);
    await section.getByLabel('On chain id').fill('84532');
    await section.getByRole('button', { name: 'Add policy' }).click();
    await section.getByText('Launch').waitFor();
    expect((await policies()).map((policy) => policy.name)).toEqual(['Default policy', 'Launch']);

    await section.getByRole('button', { name: 'Move Launch up' }).click();
    await section.getByRole('button', { name: 'Move Default policy up' }).waitFor();
    expect((await policies()).map((policy) => policy.name)).toEqual(['Launch', 'Default policy']);

    await section.getByRole('button', { name: 'Delete Default policy' }).click();
    await section.getByRole('button', { name: 'Delete Default policy' }).waitFor({ state: 'detached' });
    expect((await policies()).map((policy) => policy.name)).toEqual(['Launch']);

    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expect(dashboard.errors).toEqual([]);
    expect(dashboard.foreignRequests).toEqual([]);
    await dashboard.context.close();
  });
});
