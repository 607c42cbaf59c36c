import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { getAddress, numberToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { smartAccountRegistrationMessage } from '../../api/auth/smartAccountProof';
import { launchChromium } from '../checkout/chromium';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { contractWalletChain } from '../merchants/contractWallets';
import { allowContract, paymasterRpc, usageRows } from '../paymaster/paymasterApi';
import { ENTRY_POINTS, newAccountOn } from '../paymaster/smartAccounts';
import { sendAndWait, sponsorOperation, usdcCall } from '../paymaster/sponsoredOperations';
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
 * Every dashboard page in chromium at 375 and 1280 px: a screenshot in test-output/dashboard/, axe-core
 * with no serious or critical violation, no console error, no foreign request; and the flows of the
 * pages the main-flows file leaves out: a paymaster client, a top-up and its checkout, a yield draft
 * and its domain's TXT record, the empty and error states.
 */
const PAGES = [
  { path: '', name: 'overview', heading: 'Overview' },
  { path: '/sessions', name: 'sessions', heading: 'Sessions' },
  { path: '/payment-links/new', name: 'new-payment-link', heading: 'New payment link' },
  { path: '/plans', name: 'plans', heading: 'Plans' },
  { path: '/subscriptions', name: 'subscriptions', heading: 'Subscriptions' },
  { path: '/webhooks', name: 'webhooks', heading: 'Webhooks' },
  { path: '/api-keys', name: 'api-keys', heading: 'API keys' },
  { path: '/paymaster', name: 'paymaster', heading: 'Paymaster' },
  { path: '/billing', name: 'billing', heading: 'Billing' },
  { path: '/yield', name: 'yield', heading: 'Yield' },
  { path: '/profile', name: 'profile', heading: 'Profile' },
] as const;

const ETHEREUM_SEPOLIA = 11155111;
const BASE_SEPOLIA = 84532;

describe('every dashboard page in chromium', () => {
  let app: TestApp;
  let browser: Browser;
  let merchant: SignedInMerchant;
  let sessionId: string;
  let endpointId: string;

  beforeAll(async () => {
    // Workflows started here (domain verification) wait on task queues no worker serves.
    [app, browser] = await Promise.all([
      startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: `d${randomBytes(4).toString('hex')}-` }),
      launchChromium(),
    ]);
    merchant = await signInNewMerchant(app);
    const sk = { authorization: `Bearer ${await createApiKey(app, merchant, 'seeded')}` };
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '42.00', merchantName: 'Seeded order', sandboxMode: true },
    });
    sessionId = created.body.id;
    const endpoint = await app.request('/v1/webhooks', {
      method: 'POST',
      headers: sk,
      json: { url: 'https://shop.example/hooks', description: 'Seeded endpoint' },
    });
    endpointId = endpoint.body.id;
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function signedIn(viewport = DESKTOP, path = ''): Promise<DashboardPage> {
    const dashboard = await openDashboard(browser, app, { viewport });
    dashboard.page.on('dialog', (dialog) => void dialog.accept());
    await openSignedIn(dashboard.page, app.baseUrl, merchant.token, path);
    return dashboard;
  }

  /** Loaded: the heading is there and no panel says Loading… any more. */
  async function settled(dashboard: DashboardPage, heading: string): Promise<void> {
    await dashboard.page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await dashboard.page.waitForFunction(
      () =>
        ![...document.querySelectorAll('[role="status"]')].some((node) =>
          node.textContent?.includes('Loading'),
        ),
    );
  }

  it('creates a paymaster client, a top-up with its checkout and a yield draft with its TXT record', async () => {
    const dashboard = await signedIn(DESKTOP, '/paymaster');
    const { page } = dashboard;
    await settled(dashboard, 'Paymaster');
    await page.getByRole('button', { name: 'Create client' }).click();
    // Neither label nor chain: the API's 400, each part beside its field, nothing created.
    await page
      .locator('fieldset .field-error')
      .filter({ hasText: /allowedChainIds/ })
      .waitFor();
    await page
      .locator('.field.invalid .field-error')
      .filter({ hasText: /^label/ })
      .waitFor();
    expect((await app.request('/v1/paymaster/clients', { headers: merchant.auth })).body.data).toEqual([]);
    await page.getByLabel('Label', { exact: true }).first().fill('Mobile app');
    await page.getByLabel('Ethereum Sepolia', { exact: true }).check();
    await page.getByRole('button', { name: 'Create client' }).click();
    await page
      .getByText(/pmc_test_/)
      .first()
      .waitFor();

    // A real sponsored operation of that client, the way a wallet gets one included: stub data and
    // signed data from our paymaster RPC, estimation and submission through our bundler proxy to the
    // chain's Alto bundler, included on the local Ethereum Sepolia. Then one the policy refuses (its
    // target is not on the allowlist), recorded as the paymaster records refusals.
    const client = (await app.request('/v1/paymaster/clients', { headers: merchant.auth })).body.data[0];
    const chain = testStack().chains.find((candidate) => candidate.chainId === ETHEREUM_SEPOLIA)!;
    await allowContract(app, merchant, chain.chainId, chain.contracts.usdc!);
    const api = { app, clientId: client.clientId as string };
    const account = await newAccountOn(chain, '0.7');
    const { operation } = await sponsorOperation(
      api,
      chain,
      account,
      account.execute(chain.contracts.usdc!, 0n, usdcCall('mint', account.address, 1_000n)),
    );
    const included = await sendAndWait(api, chain, '0.7', operation);
    expect(included.success).toBe(true);
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    await expect(
      sponsorOperation(api, chain, account, account.execute(stranger, 0n, '0x'), { nonce: 1n }),
    ).rejects.toThrow(/paymaster_target_not_allowed/);
    // And a request for a chain the client does not allow (Base Sepolia): 403, recorded as denied_chain.
    const refusedChain = await paymasterRpc(app, api.clientId, {
      jsonrpc: '2.0',
      id: 2,
      method: 'pm_getPaymasterStubData',
      params: [{}, ENTRY_POINTS['0.7'], numberToHex(BASE_SEPOLIA)],
    });
    expect(refusedChain.status).toBe(403);
    const usage = await usageRows(app, merchant);
    // `submitted` until a receipt tracker records the inclusion (a worker's: none serves this app, though
    // another test file's tracker on the same chain may).
    expect(usage.map((row) => row.status)).toEqual([
      'denied_chain',
      'denied_target',
      expect.stringMatching(/^(submitted|onchain_success)$/),
    ]);
    expect(usage[2]).toMatchObject({ mode: 'sponsored', chainId: ETHEREUM_SEPOLIA });
    expect(String(usage[2]!.userOpHash).toLowerCase()).toBe(included.userOpHash.toLowerCase());
    await page.reload();
    await settled(dashboard, 'Paymaster');
    await page
      .getByTestId('usage-table')
      .getByText(/^(submitted|onchain success)$/)
      .waitFor();
    await page.getByTestId('usage-table').getByText('denied target').waitFor();
    await page.getByRole('img', { name: '1 sponsored operations over 7 days' }).waitFor();
    // Testnet gas is not the merchant's money: nothing is charged for it, and the page says so.
    await page
      .getByTestId('no-charges')
      .getByText(/operations on testnets are never charged/)
      .waitFor();
    await page
      .getByRole('img', { name: 'The latest 3 operations by chain: Ethereum Sepolia: 2, Base Sepolia: 1' })
      .waitFor();
    await page
      .getByRole('img', {
        name: /^The latest 3 operations by status: denied chain: 1, denied target: 1, (onchain success|submitted): 1$/,
      })
      .waitFor();
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(300);
    await screenshot(page, 'paymaster-usage-chart-375');
    await page.setViewportSize(DESKTOP);
    await page.waitForTimeout(300);
    await screenshot(page, 'paymaster-usage-chart-1280');

    await page.getByRole('link', { name: 'Billing' }).click();
    await settled(dashboard, 'Billing');
    await page.getByLabel('Amount (USD)').fill('-5');
    await page.getByRole('button', { name: 'Start top-up' }).click();
    await page
      .locator('.field.invalid .field-error')
      .filter({ hasText: /amount/i })
      .waitFor();
    await page.getByLabel('Amount (USD)').fill('50');
    await page.getByRole('button', { name: 'Start top-up' }).click();
    const checkout = page.getByTestId('topup-checkout');
    await checkout.waitFor();
    const checkoutUrl = (await checkout.getAttribute('href'))!;
    const checkoutPage = await app.request(new URL(checkoutUrl).pathname);
    expect(checkoutPage.status).toBe(200);
    expect(checkoutPage.text).toContain('Prepaid gas top-up');

    await page.getByRole('link', { name: 'Yield' }).click();
    await settled(dashboard, 'Yield');
    await page.getByLabel('Name').fill('Savings');
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.getByRole('heading', { level: 2, name: 'Savings' }).waitFor();
    await page.getByLabel('Add a domain').fill('earn.dashboard-shop.example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const txt = page.getByTestId('txt-value');
    await txt.waitFor();
    const deployments = await app.request('/v1/merchants/me/yield-deployments', { headers: merchant.auth });
    expect(await txt.textContent()).toBe(deployments.body.data[0].domains[0].verification.value);
    expect(dashboard.errors).toEqual([]);
    await dashboard.context.close();
  }, 240_000);

  it('lists the smart accounts on the profile and registers one signed by the browser wallet; bad input and another merchant’s account show the API’s message beside the address', async () => {
    const chain = testStack().chains.find((candidate) => candidate.chainId === BASE_SEPOLIA)!;
    const wallets = await contractWalletChain({ chainId: BASE_SEPOLIA, rpcUrl: chain.rpcUrl });
    // The browser wallet is the owner of a contract account (ERC-1271): it signs for the account.
    const owner = privateKeyToAccount(generatePrivateKey());
    const mine = getAddress(await wallets.deployWallet(owner.address));
    const dashboard = await openDashboard(browser, app, { wallet: owner, chainId: BASE_SEPOLIA });
    const { page } = dashboard;
    await openSignedIn(page, app.baseUrl, merchant.token, '/profile');
    await settled(dashboard, 'Profile');
    await page.getByText('No smart account registered yet.').waitFor();
    const accounts = () =>
      app.request('/v1/merchants/me/smart-accounts', { headers: merchant.auth }).then((r) => r.body.data);

    const address = page.getByLabel('Smart account address');
    await address.fill('0x1234');
    await page.getByRole('button', { name: 'Sign and register' }).click();
    await page
      .locator('.field.invalid .field-error')
      .filter({ hasText: 'address: must be a 0x address' })
      .waitFor();
    expect(await accounts()).toEqual([]);

    await address.fill(mine);
    await page.getByLabel('Network that verifies its signature').selectOption({ label: 'Base Sepolia' });
    await page.getByRole('button', { name: 'Sign and register' }).click();
    await page.getByText(`Registered ${mine}.`).waitFor();
    await page.getByTestId('smart-accounts').locator(`code[title="${mine}"]`).waitFor();
    expect(await accounts()).toEqual([{ address: mine, registeredAt: expect.any(String) }]);

    // Another merchant holds this one: its owner's signature for us is valid, and the API says 409.
    const otherOwner = privateKeyToAccount(generatePrivateKey());
    const theirs = getAddress(await wallets.deployWallet(otherOwner.address));
    const holder = await signInNewMerchant(app);
    const proofFor = (forMerchant: string) =>
      otherOwner.signMessage({
        message: smartAccountRegistrationMessage({
          merchantId: forMerchant,
          address: theirs,
          chainId: BASE_SEPOLIA,
        }),
      });
    const claimed = await app.request('/v1/merchants/me/smart-accounts', {
      method: 'POST',
      headers: holder.auth,
      json: { address: theirs, chainId: BASE_SEPOLIA, signature: await proofFor(holder.merchantId) },
    });
    expect(claimed.status).toBe(204);
    await address.fill(theirs);
    await page.getByLabel('Signature (optional)').fill(await proofFor(merchant.merchantId));
    await page.getByRole('button', { name: 'Sign and register' }).click();
    await page
      .locator('.field.invalid .field-error')
      .filter({ hasText: 'Smart account already claimed by another merchant' })
      .waitFor();
    expect(await accounts()).toEqual([{ address: mine, registeredAt: expect.any(String) }]);
    await screenshot(page, 'profile-smart-account-claimed-1280');
    expect(dashboard.errors).toEqual([]);
    expect(dashboard.foreignRequests).toEqual([]);
    await dashboard.context.close();
  }, 240_000);

  for (const viewport of [PHONE, DESKTOP]) {
    it(`shows every page at ${viewport.width} px, accessible, without errors`, async () => {
      const dashboard = await signedIn(viewport);
      const { page } = dashboard;
      for (const entry of [
        ...PAGES,
        { path: `/sessions/${sessionId}`, name: 'session', heading: 'Session' },
        { path: `/webhooks/${endpointId}`, name: 'webhook-endpoint', heading: 'Webhook endpoint' },
      ]) {
        await page.goto(`${app.baseUrl}/dashboard${entry.path}`);
        await settled(dashboard, entry.heading);
        // Charts draw after their data: let uPlot lay out before the picture.
        await page.waitForTimeout(150);
        expect({ page: entry.name, violations: await seriousAccessibilityViolations(page) }).toEqual({
          page: entry.name,
          violations: [],
        });
        await screenshot(page, `${entry.name}-${viewport.width}`);
        // Nothing wider than the viewport: usable without sideways scrolling.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect({ page: entry.name, overflow }).toEqual({ page: entry.name, overflow: 0 });
      }
      expect(dashboard.errors).toEqual([]);
      expect(dashboard.foreignRequests).toEqual([]);
      await dashboard.context.close();
    }, 120_000);
  }

  it('shows empty states to a new merchant and an error state with a retry when the API fails', async () => {
    const fresh = await signInNewMerchant(app);
    const dashboard = await openDashboard(browser, app);
    await openSignedIn(dashboard.page, app.baseUrl, fresh.token, '/sessions');
    await dashboard.page.getByText('No sessions yet.').waitFor();
    await dashboard.page.goto(`${app.baseUrl}/dashboard/sessions/00000000-0000-4000-8000-000000000000`);
    await dashboard.page.getByText('No session of yours has this id.').waitFor();
    await screenshot(dashboard.page, 'session-not-found-1280');
    // A filter the API refuses renders its message with a way to try again.
    await dashboard.page.goto(`${app.baseUrl}/dashboard/sessions?status=bogus`);
    const failure = dashboard.page.getByRole('alert').filter({ hasText: 'status' });
    await failure.waitFor();
    await failure.getByRole('button', { name: 'Try again' }).waitFor();
    await screenshot(dashboard.page, 'sessions-error-1280');
    await dashboard.page.goto(`${app.baseUrl}/dashboard/nowhere`);
    await dashboard.page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    await dashboard.context.close();
  });

  it('forgets the token once the API refuses it (revoked elsewhere): back to sign-in', async () => {
    const other = await signInNewMerchant(app);
    const dashboard = await openDashboard(browser, app);
    await openSignedIn(dashboard.page, app.baseUrl, other.token);
    await dashboard.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect((await app.request('/v1/auth/logout', { method: 'POST', headers: other.auth })).status).toBe(204);
    await dashboard.page.getByRole('link', { name: 'Profile' }).click();
    await dashboard.page.getByRole('button', { name: 'Sign in with wallet' }).waitFor();
    await dashboard.context.close();
  });
});
