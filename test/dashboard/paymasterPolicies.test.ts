import type { Browser } from 'playwright-core';
import { launchChromium } from '../checkout/chromium';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { createPaymasterClient } from '../paymaster/paymasterApi';
import { TARGET, signedDataRequest } from '../paymaster/signedDataRequests';
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

    await section.getByRole('button', { name: 'Move up: Launch' }).click();
    await section.getByRole('button', { name: 'Move up: Default policy' }).waitFor();
    expect((await policies()).map((policy) => policy.name)).toEqual(['Launch', 'Default policy']);

    await section.getByRole('button', { name: 'Delete Default policy' }).click();
    await section.getByRole('button', { name: 'Delete Default policy' }).waitFor({ state: 'detached' });
    expect((await policies()).map((policy) => policy.name)).toEqual(['Launch']);

    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expect(dashboard.errors).toEqual([]);
    expect(dashboard.foreignRequests).toEqual([]);
    await dashboard.context.close();
  });

  it('edits a policy’s window and budgets (a refused amount beside the budgets, nothing saved) and checks whether an operation would be sponsored', async () => {
    const client = await createPaymasterClient(app, merchant, { label: 'Budgets' });
    const policyPath = `/v1/paymaster/clients/${client.id}/policies`;
    const created = await app.request(policyPath, {
      method: 'POST',
      headers: merchant.auth,
      json: { name: 'Weekly', allowlist: [{ chainId: 84532, contractAddress: TARGET }] },
    });
    expect(created.status).toBe(201);
    const stored = async () =>
      (await app.request(`${policyPath}/${created.body.id}`, { headers: merchant.auth })).body as {
        budgets: unknown[];
        endsAt: string | null;
      };
    const dashboard = await openDashboard(browser, app, { viewport: DESKTOP });
    const { page } = dashboard;
    await openSignedIn(page, app.baseUrl, merchant.token, '/paymaster');
    const section = page.getByRole('region', { name: 'Sponsorship policies' });
    await section.getByLabel('Client').selectOption({ label: 'Budgets' });
    await section.getByText('Weekly').waitFor();

    // Would the operation be sponsored? The default policy (empty shared allowlist) would not; Weekly would.
    const [userOperation] = signedDataRequest().params;
    const check = section.getByRole('form', { name: 'Would this be sponsored?' });
    await check.getByLabel('User operation (JSON)').fill(JSON.stringify(userOperation, null, 2));
    await check.getByRole('button', { name: 'Check' }).click();
    await check.getByRole('status').getByText('Sponsored by Weekly').waitFor();
    await check.getByText(/Default policy: would not \(paymaster_target_not_allowed/).waitFor();

    await section.getByRole('button', { name: 'Edit the window and budgets of Weekly' }).click();
    const editor = section.getByRole('form', { name: 'Window and budgets of Weekly' });
    await editor.getByRole('button', { name: 'Add budget' }).click();
    await editor.getByLabel('Budget 1 kind').selectOption('operations');
    await editor.getByLabel('Budget 1 amount').fill('-1');
    await editor.getByLabel('Budget 1 period').selectOption('week');
    await editor.getByRole('button', { name: 'Save Weekly' }).click();
    await editor.locator('.field-error').filter({ hasText: 'budgets.0.amount' }).waitFor();
    expect((await stored()).budgets).toEqual([]);

    await editor.getByLabel('Budget 1 amount').fill('1');
    await editor.getByRole('button', { name: 'Add budget' }).click();
    await editor.getByLabel('Budget 2 amount').fill('25.5');
    await editor.getByLabel('Budget 2 scope').selectOption('sender');
    await editor.getByLabel('Ends').fill('2099-06-01T12:00');
    await editor.getByRole('button', { name: 'Save Weekly' }).click();
    await editor.waitFor({ state: 'detached' });
    await section.getByText(/1 operations per week, 25\.5 USD per day per sender/).waitFor();
    expect(await stored()).toMatchObject({
      budgets: [
        { kind: 'operations', amount: '1', period: 'week', scope: 'policy' },
        { kind: 'usd', amount: '25.5', period: 'day', scope: 'sender' },
      ],
      endsAt: expect.stringMatching(/^2099-06-01T/),
    });

    // One signed operation spends the weekly budget of 1: the check now says why Weekly would not.
    const signed = await app.request('/v1/paymaster/rpc', {
      method: 'POST',
      headers: { 'x-client-id': client.clientId },
      json: signedDataRequest(),
    });
    expect(signed.body.result).toBeDefined();
    await check.getByRole('button', { name: 'Check' }).click();
    await check.getByRole('status').getByText('Not sponsored').waitFor();
    await check
      .getByText(
        /Weekly: would not \(paymaster_rate_limit_exceeded: policy "Weekly" reached its budget of 1 operations per week/,
      )
      .waitFor();

    // Remove a budget: the other keeps its place and count.
    await section.getByRole('button', { name: 'Edit the window and budgets of Weekly' }).click();
    await editor.getByRole('button', { name: 'Remove budget 2' }).click();
    await editor.getByRole('button', { name: 'Save Weekly' }).click();
    await editor.waitFor({ state: 'detached' });
    expect((await stored()).budgets).toEqual([
      { kind: 'operations', amount: '1', period: 'week', scope: 'policy' },
    ]);

    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expect(dashboard.errors).toEqual([]);
    expect(dashboard.foreignRequests).toEqual([]);
    await dashboard.context.close();
  });
});
