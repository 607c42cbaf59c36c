import type { Browser } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { launchChromium } from '../checkout/chromium';
import { startTestApp, type TestApp } from '../harness/app';
import { freshEmail, waitForCode } from '../harness/mailbox';
import { signInNewMerchant, verifyMerchantEmail } from '../harness/merchants';
import { openDashboard, PHONE, screenshot, seriousAccessibilityViolations, tokenIn } from './browser';

/**
 * Signing in to the dashboard in Debian's chromium against the real app: by an injected EIP-1193 wallet
 * (SIWE through login-payload and verify) and by an e-mail code read from MailDev; signing out revokes
 * the token. The shell is served under the checkout page's strict CSP and makes no foreign request.
 */
describe('dashboard sign-in in chromium', () => {
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    [app, browser] = await Promise.all([startTestApp(), launchChromium()]);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('serves the shell for every client route under the strict CSP, and the hashed assets for good', async () => {
    const shell = await app.request('/dashboard/sessions/anything');
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-type')).toContain('text/html');
    const csp = shell.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'nonce-[^']+'$|script-src 'nonce-[^']+';/);
    const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
    const script = new RegExp(
      `<script type="module" src="(/dashboard/assets/[^"]+\\.js)" nonce="${nonce.replace(/[+/=]/g, '\\$&')}">`,
    ).exec(shell.text);
    expect(script).not.toBeNull();
    const asset = await app.request(script![1]!);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('text/javascript');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await app.request('/dashboard/assets/missing.js')).status).toBe(404);
    expect((await app.request('/dashboard/assets/..%2Fpackage.json')).status).toBe(404);
    expect((await app.request('/dashboard')).status).toBe(200);
  });

  it('signs in with a browser wallet, and signing out revokes the token', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { page, context, errors, foreignRequests } = await openDashboard(browser, app, {
      viewport: PHONE,
      wallet,
    });
    await page.goto(`${app.baseUrl}/dashboard`);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-375');
    await page.getByRole('button', { name: 'Sign in with wallet' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const token = (await tokenIn(page))!;
    const me = await app.request('/v1/merchants/me', { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(me.body.walletAddress).toBe(wallet.address);

    // A reload keeps the tab signed in (sessionStorage), a new tab would not.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in with wallet' }).waitFor();
    expect(await tokenIn(page)).toBeNull();
    const after = await app.request('/v1/merchants/me', { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
    expect(errors).toEqual([]);
    expect(foreignRequests).toEqual([]);
    await context.close();
  });

  it('signs in with an e-mail code from MailDev, a wrong code answered beside the field', async () => {
    const merchant = await signInNewMerchant(app);
    const email = freshEmail('dashboard');
    await verifyMerchantEmail(app, merchant, email);
    const { page, context, errors } = await openDashboard(browser, app);
    await page.goto(`${app.baseUrl}/dashboard`);
    await page.getByLabel('E-mail (the verified address of your profile)').fill(email);
    await page.getByRole('button', { name: 'Send me a code' }).click();
    const code = await waitForCode(email, { count: 2 });
    const wrong = code === '000000' ? '111111' : '000000';
    await page.getByLabel('Code', { exact: true }).fill(wrong);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // The API's 401 message, beside the code field.
    await page.locator('.field.invalid .field-error').filter({ hasText: /code/i }).waitFor();
    await screenshot(page, 'sign-in-email-code-1280');
    await page.getByLabel('Code', { exact: true }).fill(code);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const token = (await tokenIn(page))!;
    const me = await app.request('/v1/merchants/me', { headers: { authorization: `Bearer ${token}` } });
    expect(me.body.id).toBe(merchant.merchantId);
    expect(errors).toEqual([]);
    await context.close();
  });
});
