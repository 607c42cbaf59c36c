import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { toBaseUnits } from '../../money/baseUnits';
import type { SessionStatus } from '../../db/schema';
import { PAYMENT_QR_OPTIONS } from '../../web/checkout/paymentQrCode';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { launchChromium } from './chromium';
import { darkModulesOfSvg, darkModulesOfText } from './qrMatrix';

/**
 * The checkout page as a payer sees it: real chromium at a phone viewport against the real app
 * and database. Status changes are written to the database directly, as the session workflow would.
 */
const PHONE = { width: 375, height: 812 };
const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'checkout');

interface PublicPaymentOption {
  chainId: number;
  symbol: string;
  decimals: number;
  amount: string;
  depositAddress: string;
  paymentUri: string;
}

describe('checkout page in chromium at 375×812', () => {
  let app: TestApp;
  let sk: { authorization: string };
  let browser: Browser;
  let successSite: Server;
  let successOrigin: string;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    [app, browser] = await Promise.all([startTestApp(), launchChromium()]);
    const merchant = await signInNewMerchant(app);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    // The merchant's "thank you" page the payer is sent back to.
    successSite = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><title>Thanks</title><h1>Thanks for your order</h1><p>${request.url}</p>`);
    });
    await new Promise<void>((resolve) => successSite.listen(0, '127.0.0.1', resolve));
    successOrigin = `http://127.0.0.1:${(successSite.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await browser?.close();
    successSite?.closeAllConnections();
    await new Promise((resolve) => successSite?.close(resolve));
    await app?.close();
  });

  async function createSession(json: object): Promise<string> {
    const response = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { sandboxMode: true, ...json },
    });
    expect(response.status).toBe(201);
    return response.body.id;
  }

  const setSession = (
    id: string,
    values: { status?: SessionStatus; webhook_delivered?: boolean; success_url?: string; expires_at?: Date },
  ) => app.db.updateTable('sessions').set(values).where('id', '=', id).execute();

  interface OpenedCheckout {
    page: Page;
    context: BrowserContext;
    /** Requests to anything but the app (and the merchant's success page): must stay empty. */
    foreignRequests: string[];
    /** Console errors and uncaught exceptions, CSP violations included: must stay empty. */
    errors: string[];
    dialogs: string[];
  }

  async function openCheckout(id: string): Promise<OpenedCheckout> {
    const context = await browser.newContext({
      viewport: PHONE,
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    const opened: OpenedCheckout = { page, context, foreignRequests: [], errors: [], dialogs: [] };
    page.on('request', (request) => {
      const url = request.url();
      if (
        !url.startsWith(`${app.baseUrl}/`) &&
        !url.startsWith(`${successOrigin}/`) &&
        !url.startsWith('data:')
      )
        opened.foreignRequests.push(url);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') opened.errors.push(message.text());
    });
    page.on('pageerror', (error) => opened.errors.push(String(error)));
    page.on('dialog', (dialog) => {
      opened.dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const response = await page.goto(`${app.baseUrl}/pay/${id}`);
    expect(response?.status()).toBe(200);
    return opened;
  }

  const visiblePanel = (page: Page) => page.locator('[data-option]:not([hidden])');
  const noHorizontalScroll = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

  it('shows merchant, total, line items and the sandbox badge; each token × network shows the exact amount, deposit address and a QR of its payment URI', async () => {
    const lineItems = [
      { name: 'Espresso machine', quantity: 1, unitPrice: '1199.567891', total: '1199.567891' },
      { name: 'Barista course', quantity: 2, unitPrice: '17.5', total: '35' },
    ];
    const id = await createSession({
      amount: '1234.567891',
      merchantName: 'Corner Café',
      lineItems,
      expiresInSec: 1800,
    });
    const session = (await app.request(`/v1/sessions/${id}`)).body as {
      paymentOptions: PublicPaymentOption[];
    };
    expect(session.paymentOptions.length).toBe(9);

    const { page, context, foreignRequests, errors } = await openCheckout(id);
    try {
      expect(await page.getByTestId('merchant-name').textContent()).toBe('Corner Café');
      expect(await page.getByTestId('total-amount').textContent()).toBe('$1,234.567891');
      const items = await page.locator('.line-item').allInnerTexts();
      expect(items.map((text) => text.replace(/\s+/g, ' ').trim())).toEqual([
        'Espresso machine 1 × $1,199.567891 $1,199.567891',
        'Barista course 2 × $17.50 $35.00',
      ]);
      const badge = page.getByTestId('sandbox-badge');
      expect(await badge.isVisible()).toBe(true);
      expect(await badge.innerText()).toContain('Test mode — testnets only');

      // The countdown: about 30 minutes left (page rendered a few seconds after creation).
      const countdown = await page.locator('[data-countdown]').textContent();
      const [minutes, seconds] = countdown!.split(':').map(Number);
      const remaining = minutes! * 60 + seconds!;
      expect(remaining).toBeGreaterThan(1800 - 60);
      expect(remaining).toBeLessThanOrEqual(1800);

      await page.screenshot({ path: join(SCREENSHOTS, 'checkout-awaiting-payment.png'), fullPage: true });

      for (const option of session.paymentOptions) {
        await page.locator(`label:has(input[name="token"][value="${option.symbol}"])`).click();
        await page.locator(`label:has(input[name="network"][value="${option.chainId}"])`).click();
        const panel = visiblePanel(page);
        expect(await panel.count()).toBe(1);
        expect(await panel.getAttribute('data-option')).toBe(`${option.symbol}:${option.chainId}`);

        const shownAmount = await panel.getByTestId('option-amount').textContent();
        expect(shownAmount).toBe(`1234.567891 ${option.symbol}`);
        expect(toBaseUnits(shownAmount!.split(' ')[0]!, option.decimals)).toBe(BigInt(option.amount));
        expect(await panel.getByTestId('option-address').textContent()).toBe(option.depositAddress);
        expect(await panel.locator('a.wallet-button').getAttribute('href')).toBe(option.paymentUri);

        const qr = panel.getByTestId('option-qr');
        expect(await qr.isVisible()).toBe(true);
        expect((await qr.boundingBox())!.width).toBeGreaterThanOrEqual(150);
        // The picture, read back module by module, is the QR symbol of exactly this payment URI.
        const drawn = darkModulesOfSvg(await qr.innerHTML());
        const expected = darkModulesOfText(option.paymentUri, PAYMENT_QR_OPTIONS);
        expect(drawn.size).toBe(expected.size);
        expect([...drawn].every((module) => expected.has(module))).toBe(true);

        expect(await noHorizontalScroll(page)).toBeLessThanOrEqual(PHONE.width);
      }

      // Copying the address puts exactly the address on the clipboard.
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
      const last = session.paymentOptions.at(-1)!;
      await visiblePanel(page).getByRole('button', { name: 'Copy address' }).click();
      await page.waitForFunction(
        () => document.querySelector('[data-option]:not([hidden]) .copy.copied') !== null,
      );
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(last.depositAddress);

      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('follows the status live (confirming, settling, completed) and redirects to successUrl only once the webhook was delivered', async () => {
    const id = await createSession({ amount: '42', merchantName: 'Corner Café' });
    // The API only takes https; the test's merchant site is plain http on loopback.
    const successUrl = `${successOrigin}/thanks?session=${id}`;
    await setSession(id, { success_url: successUrl });
    const { page, context, foreignRequests, errors } = await openCheckout(id);
    try {
      expect(await page.locator('section.pay').isVisible()).toBe(true);

      const started = Date.now();
      await setSession(id, { status: 'confirming' });
      await page.getByTestId('state-confirming').waitFor({ state: 'visible', timeout: 5000 });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await page.locator('section.pay').isVisible()).toBe(false);
      expect(await page.locator('[data-status-label]').textContent()).toBe('Confirming');
      await page.screenshot({ path: join(SCREENSHOTS, 'checkout-confirming.png'), fullPage: true });

      await setSession(id, { status: 'bridging' });
      await page.getByTestId('state-bridging').waitFor({ state: 'visible', timeout: 5000 });
      expect(await page.getByTestId('state-confirming').isVisible()).toBe(false);

      await setSession(id, { status: 'completed' });
      await page.getByTestId('state-completed').waitFor({ state: 'visible', timeout: 5000 });
      await page.screenshot({ path: join(SCREENSHOTS, 'checkout-completed.png'), fullPage: true });
      // Completed but the webhook not yet delivered: the payer stays (two more polls pass).
      await page.waitForTimeout(4500);
      expect(page.url()).toBe(`${app.baseUrl}/pay/${id}`);

      await setSession(id, { webhook_delivered: true });
      await page.waitForURL(successUrl, { timeout: 8000 });
      expect(await page.locator('h1').textContent()).toBe('Thanks for your order');

      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows failed and expired distinctly, and never redirects from them', async () => {
    const failedId = await createSession({ amount: '10', merchantName: 'Corner Café' });
    const expiredId = await createSession({ amount: '10', merchantName: 'Corner Café' });
    for (const id of [failedId, expiredId])
      await setSession(id, { success_url: `${successOrigin}/thanks?session=${id}` });
    const failed = await openCheckout(failedId);
    const expired = await openCheckout(expiredId);
    try {
      // The webhook went out at confirming; the on-chain phase then reverted.
      await setSession(failedId, { status: 'failed', webhook_delivered: true });
      // No job flips expiry: the status view computes it from expiresAt.
      await setSession(expiredId, { expires_at: new Date(Date.now() - 1000) });

      await failed.page.getByTestId('state-failed').waitFor({ state: 'visible', timeout: 5000 });
      expect(await failed.page.getByTestId('state-failed').innerText()).toContain(failedId);
      expect(await failed.page.locator('section.pay').isVisible()).toBe(false);
      expect(await failed.page.locator('[data-status-label]').textContent()).toBe('Failed');
      await failed.page.screenshot({ path: join(SCREENSHOTS, 'checkout-failed.png'), fullPage: true });

      await expired.page.getByTestId('state-expired').waitFor({ state: 'visible', timeout: 5000 });
      expect(await expired.page.locator('section.pay').isVisible()).toBe(false);
      expect(await expired.page.locator('[data-status-label]').textContent()).toBe('Expired');
      await expired.page.screenshot({ path: join(SCREENSHOTS, 'checkout-expired.png'), fullPage: true });

      await failed.page.waitForTimeout(3000);
      expect(failed.page.url()).toBe(`${app.baseUrl}/pay/${failedId}`);
      for (const opened of [failed, expired]) {
        expect(opened.foreignRequests).toEqual([]);
        expect(opened.errors).toEqual([]);
      }
    } finally {
      await failed.context.close();
      await expired.context.close();
    }
  });

  it('a session whose countdown runs out in the open page turns to expired', async () => {
    const id = await createSession({ amount: '3', expiresInSec: 60 });
    // Move the deadline close: the page counts down to it and the status view agrees at expiry.
    await setSession(id, { expires_at: new Date(Date.now() + 4000) });
    const { page, context, errors } = await openCheckout(id);
    try {
      expect(await page.locator('section.pay').isVisible()).toBe(true);
      await page.getByTestId('state-expired').waitFor({ state: 'visible', timeout: 8000 });
      expect(await page.locator('[data-countdown]').textContent()).toBe('0:00');
      await page.waitForTimeout(2500);
      // The page loads itself again after expiry (to tell expired from underpaid): wait out that load.
      await page.getByTestId('state-expired').waitFor({ state: 'visible', timeout: 10_000 });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a partly paid session that expires in the open page shows underpaid: what was received and what happens next', async () => {
    const id = await createSession({ amount: '25', merchantName: 'Corner Café', expiresInSec: 60 });
    await setSession(id, {
      success_url: `${successOrigin}/thanks?session=${id}`,
      expires_at: new Date(Date.now() + 4000),
    });
    const { paymentOptions } = (await app.request(`/v1/sessions/${id}`)).body as {
      paymentOptions: (PublicPaymentOption & { tokenAddress: string })[];
    };
    const usdc = paymentOptions.find((option) => option.symbol === 'USDC')!;
    const { page, context, foreignRequests, errors } = await openCheckout(id);
    try {
      // 10.50 USDC arrives in time, as the deposit monitor records it.
      await app.db
        .insertInto('deposits')
        .values({
          session_id: id,
          chain_id: usdc.chainId,
          token_address: usdc.tokenAddress.toLowerCase(),
          deposit_address: usdc.depositAddress,
          amount: toBaseUnits('10.5', usdc.decimals).toString(),
          tx_hash: `0x${'cd'.repeat(32)}`,
          log_index: 0,
          block_number: '12',
          kind: 'accepted',
        })
        .execute();
      await page.getByTestId('state-underpaid').waitFor({ state: 'visible', timeout: 12_000 });
      expect(await page.getByTestId('received-amount').textContent()).toBe('$10.50');
      const text = await page.getByTestId('state-underpaid').innerText();
      expect(text).toContain('of $25.00');
      expect(text).toContain('Do not send more to this address');
      expect(text).toContain(id);
      expect(await page.locator('[data-status-label]').textContent()).toBe('Underpaid');
      expect(await page.getByTestId('state-expired').isVisible()).toBe(false);
      expect(await page.locator('section.pay').isVisible()).toBe(false);
      await page.screenshot({ path: join(SCREENSHOTS, 'checkout-underpaid.png'), fullPage: true });
      // An ended session never redirects, and the page is not loaded again and again.
      await setSession(id, { webhook_delivered: true });
      await page.waitForTimeout(4500);
      expect(page.url()).toBe(`${app.baseUrl}/pay/${id}`);
      expect(await page.getByTestId('state-underpaid').isVisible()).toBe(true);
      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('renders a hostile merchant name and line item as inert text', async () => {
    const merchantName = '<script>alert(1)</script>';
    const itemName = '"><img src=x onerror=alert(2)>';
    const id = await createSession({
      amount: '1',
      merchantName,
      lineItems: [{ name: itemName, quantity: 1, unitPrice: '1', total: '1' }],
    });
    const { page, context, foreignRequests, dialogs, errors } = await openCheckout(id);
    try {
      expect(await page.getByTestId('merchant-name').textContent()).toBe(merchantName);
      expect(await page.locator('.line-item-name').textContent()).toBe(itemName);
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('script').count()).toBe(2);
      await page.waitForTimeout(500);
      expect(dialogs).toEqual([]);
      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
