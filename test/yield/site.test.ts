import { mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { parseUnits, type Address } from 'viem';
import { TestStablecoin, YieldVault } from '../../contracts/artifacts';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { launchChromium } from '../checkout/chromium';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * The branded yield site: served on a verified domain's Host and at /sites/<id>; in headless chromium at
 * 375 px and 1280 px it shows the brand and the vaults, takes a deposit through an injected EIP-1193
 * wallet that forwards to anvil, and once sunset offers withdraw only. Screenshots go to test-output/yield-site.
 */

const BASE = '/v1/merchants/me/yield-deployments';
const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'yield-site');
const VIEWPORTS = { phone: { width: 375, height: 812 }, desktop: { width: 1280, height: 900 } };
/** An anvil dev account: the node signs for it, as a wallet extension would for its user. */
const VISITOR = ANVIL_DEV_ACCOUNTS[4];

let world: YieldWorld;
let merchant: SignedInMerchant;
let browser: Browser;
let deployment: { id: string; contracts: { vaults: { address: Address; asset: Address }[] } };

const call = (method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  [world, browser] = await Promise.all([startYieldWorld({ privateChain: true }), launchChromium()]);
  merchant = await signInNewMerchant(world.app);
  const draft = await call('POST', '', {
    name: 'Acme Savings',
    chainId: YIELD_CHAIN,
    branding: { displayName: 'Acme Savings', primaryColor: '#5b21b6', accentColor: '#d97706' },
  });
  expect((await call('POST', `/${draft.body.id}/deploy`)).status).toBe(202);
  deployment = await waitFor(
    async () => (await call('GET', `/${draft.body.id}`)).body,
    (body) => body.status !== 'deploying',
  );
  expect(deployment).toMatchObject({ status: 'active' });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

/** GET `path` with a chosen Host header (fetch may not set Host). */
function getWithHost(
  path: string,
  host: string,
): Promise<{ status: number; body: string; csp: string | undefined }> {
  const url = new URL(world.app.baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { hostname: url.hostname, port: url.port, path, headers: { host } },
      (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            body,
            csp: response.headers['content-security-policy'] as string | undefined,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end();
  });
}

describe('serving', () => {
  it('serves the preview of an active deployment with a strict CSP; other ids answer 404', async () => {
    const preview = await world.app.request(`/sites/${deployment.id}`);
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-type')).toMatch(/^text\/html/);
    expect(preview.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'nonce-/);
    expect(preview.text).toContain('Acme Savings');
    expect(preview.text).toContain(deployment.contracts.vaults[0]!.address);

    const draft = (await call('POST', '', { name: 'Not yet', chainId: YIELD_CHAIN })).body;
    for (const path of [`/sites/${draft.id}`, '/sites/00000000-0000-4000-8000-000000000000', '/sites/nope']) {
      const answered = await world.app.request(path);
      expect([path, answered.status]).toEqual([path, 404]);
      expect(answered.text).toContain('Nothing here');
    }
  });

  it('a domain whose TXT record is set on the DNS server gets verified and serves GET /; removing it stops the site at once', async () => {
    const hostname = `acme-${deployment.id.slice(0, 8)}.example`;
    expect((await getWithHost('/', hostname)).status).toBe(404);
    const attached = await call('POST', `/${deployment.id}/domains`, { hostname });
    expect(attached.status).toBe(201);
    // Pending: not served yet.
    expect((await getWithHost('/', hostname)).status).toBe(404);
    world.txtRecords.set(attached.body.verification.name, [attached.body.verification.value]);
    await waitFor(
      async () => (await call('GET', `/${deployment.id}`)).body.domains[0].status,
      (status) => status === 'verified',
      60_000,
    );
    const site = await getWithHost('/', hostname.toUpperCase());
    expect(site.status).toBe(200);
    expect(site.body).toContain('Acme Savings');
    expect(site.csp).toMatch(/default-src 'none'/);
    expect((await call('GET', `/${deployment.id}`)).body.siteUrl).toBe(`https://${hostname}/`);

    expect((await call('DELETE', `/${deployment.id}/domains/${attached.body.id}`)).status).toBe(204);
    expect((await getWithHost('/', hostname)).status).toBe(404);
  });
});

/** An element's text without the template's line breaks and indentation. */
const textOf = async (locator: ReturnType<Page['locator']>) => ((await locator.textContent()) ?? '').trim();

interface OpenedSite {
  page: Page;
  foreignRequests: string[];
  errors: string[];
  close(): Promise<void>;
}

/** Opens the preview in chromium with an EIP-1193 wallet injected: it signs as VISITOR and forwards to anvil. */
async function openSite(viewport: { width: number; height: number }): Promise<OpenedSite> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const rpcUrl = world.rpcUrl(YIELD_CHAIN);
  let nextId = 1;
  await context.exposeFunction('__walletRpc', async (method: string, params: unknown[]) => {
    if (method === 'eth_requestAccounts' || method === 'eth_accounts') return { result: [VISITOR.address] };
    if (method === 'wallet_switchEthereumChain') return { result: null };
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    return (await response.json()) as unknown;
  });
  await context.addInitScript(() => {
    const bridge = (
      window as unknown as {
        __walletRpc: (
          m: string,
          p: unknown[],
        ) => Promise<{ result?: unknown; error?: { message: string; code: number } }>;
      }
    ).__walletRpc;
    (window as unknown as { ethereum: unknown }).ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const answer = await bridge(method, params ?? []);
        if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
        return answer.result;
      },
    };
  });
  const page = await context.newPage();
  const opened: OpenedSite = { page, foreignRequests: [], errors: [], close: () => context.close() };
  page.on('request', (request) => {
    if (!request.url().startsWith(`${world.app.baseUrl}/`)) opened.foreignRequests.push(request.url());
  });
  page.on('console', (message) => {
    if (message.type() === 'error') opened.errors.push(message.text());
  });
  page.on('pageerror', (error) => opened.errors.push(String(error)));
  const response = await page.goto(`${world.app.baseUrl}/sites/${deployment.id}`);
  expect(response?.status()).toBe(200);
  return opened;
}

const vaultRead = (functionName: 'totalAssets' | 'balanceOf', args: readonly unknown[] = []) =>
  world.publicClient(YIELD_CHAIN).readContract({
    address: deployment.contracts.vaults[0]!.address,
    abi: YieldVault.abi,
    functionName,
    args,
  } as never) as Promise<bigint>;

describe('in chromium', () => {
  beforeAll(async () => {
    // The visitor's wallet holds USDe (the local token's mint is open).
    const client = world.publicClient(YIELD_CHAIN);
    const hash = await client.request({
      method: 'eth_sendTransaction' as never,
      params: [
        {
          from: VISITOR.address,
          to: deployment.contracts.vaults[0]!.asset,
          data: (await import('viem')).encodeFunctionData({
            abi: TestStablecoin.abi,
            functionName: 'mint',
            args: [VISITOR.address, parseUnits('1000', 18)],
          }),
        },
      ] as never,
    });
    await client.waitForTransactionReceipt({ hash: hash as `0x${string}` });
  });

  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(`shows the branding and the vault list at ${viewport.width} px, with no external request`, async () => {
      const site = await openSite(viewport);
      try {
        const { page } = site;
        await expect(textOf(page.getByTestId('brand'))).resolves.toBe('Acme Savings');
        const vault = page.locator('[data-vault]');
        await expect(vault.count()).resolves.toBe(1);
        await expect(textOf(vault.locator('h2'))).resolves.toBe('USDe');
        await expect(textOf(vault.locator('[data-total-assets]'))).resolves.toMatch(/^[\d,]+\.\d{2} USDe$/);
        await expect(textOf(vault.locator('[data-rate]'))).resolves.toMatch(/^1 sUSDe = \d+\.\d{6} USDe$/);
        await expect(page.locator('[data-action="deposit"]').count()).resolves.toBe(1);
        // The brand colour reaches the page.
        const brandBackground = await page
          .locator('header.brand')
          .evaluate((element) => getComputedStyle(element).backgroundColor);
        expect(brandBackground).toBe('rgb(91, 33, 182)');
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          viewport.width,
        );
        await page.screenshot({
          path: join(SCREENSHOTS, `site-${name}-${viewport.width}.png`),
          fullPage: true,
        });
        expect(site.foreignRequests).toEqual([]);
        expect(site.errors).toEqual([]);
      } finally {
        await site.close();
      }
    });
  }

  it('deposits 25 USDe through the injected wallet: the vault’s assets and the visitor’s shares rise', async () => {
    const site = await openSite(VIEWPORTS.phone);
    try {
      const { page } = site;
      const [assetsBefore, sharesBefore] = await Promise.all([
        vaultRead('totalAssets'),
        vaultRead('balanceOf', [VISITOR.address]),
      ]);
      await page.getByRole('button', { name: 'Connect wallet' }).click();
      await expect(page.locator('#wallet-status').textContent()).resolves.toBeTruthy();
      await page.waitForFunction(
        (address) => document.getElementById('wallet-status')!.textContent!.includes(address),
        VISITOR.address,
      );
      await page.locator('[data-action="deposit"] input').fill('25');
      await page.locator('[data-action="deposit"] button[type="submit"]').click();
      await page.waitForFunction(
        () => document.querySelector('[data-message]')!.textContent!.startsWith('Deposited'),
        undefined,
        { timeout: 60_000 },
      );
      await expect(textOf(page.locator('[data-message]'))).resolves.toBe('Deposited 25.000000 USDe.');
      const [assetsAfter, sharesAfter] = await Promise.all([
        vaultRead('totalAssets'),
        vaultRead('balanceOf', [VISITOR.address]),
      ]);
      // sUSDe rounds the stake down by at most one wei.
      expect(assetsAfter - assetsBefore).toBeGreaterThanOrEqual(parseUnits('25', 18) - 1n);
      expect(assetsAfter - assetsBefore).toBeLessThanOrEqual(parseUnits('25', 18));
      expect(sharesAfter).toBeGreaterThan(sharesBefore);
      await page.waitForFunction(() => /USDe$/.test(document.querySelector('[data-position]')!.textContent!));
      await page.screenshot({ path: join(SCREENSHOTS, 'site-deposited-375.png'), fullPage: true });
      expect(site.foreignRequests).toEqual([]);
      expect(site.errors).toEqual([]);
    } finally {
      await site.close();
    }
  });

  it('once sunset, the site offers withdraw only, and a withdrawal goes through', async () => {
    expect((await call('POST', `/${deployment.id}/sunset`)).status).toBe(200);
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const site = await openSite(viewport);
      try {
        const { page } = site;
        await expect(page.getByTestId('sunset-notice').isVisible()).resolves.toBe(true);
        await expect(page.locator('[data-action="deposit"]').count()).resolves.toBe(0);
        await expect(page.locator('[data-action="withdraw"]').count()).resolves.toBe(1);
        if (name === 'phone') {
          const sharesBefore = await vaultRead('balanceOf', [VISITOR.address]);
          await page.getByRole('button', { name: 'Connect wallet' }).click();
          await page.waitForFunction(() =>
            /USDe$/.test(document.querySelector('[data-position]')!.textContent!),
          );
          await page.locator('[data-action="withdraw"] input').fill('10');
          await page.locator('[data-action="withdraw"] button[type="submit"]').click();
          await page.waitForFunction(
            () => document.querySelector('[data-message]')!.textContent!.startsWith('Withdrew'),
            undefined,
            { timeout: 60_000 },
          );
          expect(await vaultRead('balanceOf', [VISITOR.address])).toBeLessThan(sharesBefore);
        }
        await page.screenshot({
          path: join(SCREENSHOTS, `site-sunset-${name}-${viewport.width}.png`),
          fullPage: true,
        });
        expect(site.foreignRequests).toEqual([]);
        expect(site.errors).toEqual([]);
      } finally {
        await site.close();
      }
    }
  });
});
