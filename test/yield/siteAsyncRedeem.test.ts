import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { encodeFunctionData, parseUnits, type Address } from 'viem';
import { TestStablecoin, YieldVault } from '../../contracts/artifacts';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { launchChromium } from '../checkout/chromium';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { deployCooldownSusde } from './cooldownDeployment';
import { openConnectedSite, waitForMessage, type OpenedSite } from './siteBrowser';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * The branded site on a vault that redeems asynchronously (ERC-7540, sUSDe's cooldown on): deployed through the
 * API on a private chain whose sUSDe is a LocalStakedUSDeV2 with a seven-day cooldown. In chromium, through an
 * injected EIP-1193 wallet: deposit, request a withdrawal (the plain withdraw is not offered, it would fail with
 * ERC4626ExceededMaxWithdraw), see it pending with the time left, travel past the cooldown on anvil, claim.
 * Screenshots go to test-output/yield.
 */

const BASE = '/v1/merchants/me/yield-deployments';
const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'yield');
const VIEWPORTS = { phone: { width: 375, height: 812 }, desktop: { width: 1280, height: 900 } };
const SEVEN_DAYS = 7 * 24 * 3600;
/** An anvil dev account: the node signs for it, as a wallet extension would for its user. */
const VISITOR = ANVIL_DEV_ACCOUNTS[5];

let world: YieldWorld;
let merchant: SignedInMerchant;
let browser: Browser;
let vault: { address: Address; asset: Address };

const call = (method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

const rpc = (method: string, params: unknown[] = []) =>
  world.publicClient(YIELD_CHAIN).request({ method, params } as never) as Promise<unknown>;

const read = <T>(address: Address, abi: unknown, functionName: string, args: unknown[] = []) =>
  world.publicClient(YIELD_CHAIN).readContract({ address, abi, functionName, args } as never) as Promise<T>;

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  [world, browser] = await Promise.all([
    startYieldWorld({
      privateChain: true,
      async prepareChain(own) {
        return { susde: await deployCooldownSusde(own, SEVEN_DAYS) };
      },
    }),
    launchChromium(),
  ]);
  merchant = await signInNewMerchant(world.app);
  const draft = await call('POST', '', {
    name: 'Cooldown Savings',
    chainId: YIELD_CHAIN,
    branding: { displayName: 'Cooldown Savings', primaryColor: '#0f766e', accentColor: '#b45309' },
  });
  expect((await call('POST', `/${draft.body.id}/deploy`)).status).toBe(202);
  const deployment = await waitFor(
    async () => (await call('GET', `/${draft.body.id}`)).body,
    (body) => body.status !== 'deploying',
  );
  expect(deployment).toMatchObject({ status: 'active' });
  vault = deployment.contracts.vaults[0];
  siteUrl = `${world.app.baseUrl}/sites/${deployment.id}`;
  // The visitor's wallet holds USDe (the local token's mint is open).
  const hash = (await rpc('eth_sendTransaction', [
    {
      from: VISITOR.address,
      to: vault.asset,
      data: encodeFunctionData({
        abi: TestStablecoin.abi,
        functionName: 'mint',
        args: [VISITOR.address, parseUnits('1000', 18)],
      }),
    },
  ])) as `0x${string}`;
  await world.publicClient(YIELD_CHAIN).waitForTransactionReceipt({ hash });
}, 240_000);

let siteUrl: string;

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

/** An element's text without the template's line breaks and indentation. */
const textOf = async (locator: ReturnType<Page['locator']>) => ((await locator.textContent()) ?? '').trim();

const openSite = (viewport: { width: number; height: number }): Promise<OpenedSite> =>
  openConnectedSite(browser, {
    siteUrl,
    rpcUrl: world.rpcUrl(YIELD_CHAIN),
    visitor: VISITOR.address,
    viewport,
  });

describe('the site on a vault with asynchronous redemption (sUSDe cooldown on)', () => {
  let requestedAssets: bigint;

  it('deposits, then offers a withdrawal request instead of a withdrawal, and shows two requests pending with the time left', async () => {
    const site = await openSite(VIEWPORTS.phone);
    try {
      const { page } = site;
      await page.locator('[data-action="deposit"] input').fill('25');
      await page.locator('[data-action="deposit"] button[type="submit"]').click();
      await waitForMessage(page, 'Deposited');
      const shares = await read<bigint>(vault.address, YieldVault.abi, 'balanceOf', [VISITOR.address]);
      expect(shares).toBeGreaterThan(0n);
      // Nothing is withdrawable before a request: the site offers the request, not the withdraw.
      expect(await read<bigint>(vault.address, YieldVault.abi, 'maxWithdraw', [VISITOR.address])).toBe(0n);
      await expect(page.locator('[data-action="withdraw"]').isVisible()).resolves.toBe(false);
      await expect(page.locator('[data-action="request"]').isVisible()).resolves.toBe(true);
      // The position is what the shares are worth (sUSDe rounds the stake down by at most a wei).
      await page.waitForFunction(() =>
        /^2(5\.000000|4\.999999) USDe$/.test(document.querySelector('[data-position]')!.textContent!.trim()),
      );
      await page.screenshot({ path: join(SCREENSHOTS, 'async-deposited-375.png'), fullPage: true });

      // A part (10 USDe, converted to shares), then an hour later the rest (Max: every share).
      await page.locator('[data-action="request"] input').fill('10');
      await page.locator('[data-action="request"] button[type="submit"]').click();
      await waitForMessage(page, 'Requested 10.000000 USDe');
      await rpc('evm_increaseTime', [3600]);
      await rpc('evm_mine');
      await page.waitForFunction(() => /USDe$/.test(document.querySelector('[data-position]')!.textContent!));
      await page.locator('[data-message]').evaluate((element) => (element.textContent = ''));
      await page.locator('[data-action="request"] [data-max]').click();
      await page.locator('[data-action="request"] button[type="submit"]').click();
      await waitForMessage(page, 'Requested');
      expect(await read<bigint>(vault.address, YieldVault.abi, 'balanceOf', [VISITOR.address])).toBe(0n);
      const ids = await read<bigint[]>(vault.address, YieldVault.abi, 'openRedeemRequests', [
        VISITOR.address,
      ]);
      expect(ids).toHaveLength(2);
      const requests = await Promise.all(
        ids.map((id) =>
          read<[Address, bigint, bigint, bigint]>(vault.address, YieldVault.abi, 'redeemRequest', [id]),
        ),
      );
      requestedAssets = requests.reduce((sum, [, , assets]) => sum + assets, 0n);
      expect(parseUnits('25', 18) - requestedAssets).toBeLessThanOrEqual(2n);
      expect(parseUnits('10', 18) - requests[0]![2]).toBeLessThanOrEqual(1n);
      expect(requests[1]![3] - requests[0]![3]).toBeGreaterThanOrEqual(3600n);

      // The list is read from the chain once the request's transaction is mined.
      for (const id of ids) await page.waitForSelector(`[data-request="${id}"]`);
      await expect(page.locator('[data-requests]').isVisible()).resolves.toBe(true);
      for (const id of ids) {
        const status = page.locator(`[data-request="${id}"] [data-status]`);
        await expect(textOf(status)).resolves.toMatch(/^Claimable in (7 d 0 h|6 d 2[23] h)$/);
        await expect(status.getAttribute('data-status')).resolves.toBe('pending');
      }
      await expect(page.locator('[data-claim]').isVisible()).resolves.toBe(false);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      await page.screenshot({ path: join(SCREENSHOTS, 'async-pending-375.png'), fullPage: true });
      expect(site.errors).toEqual([]);
    } finally {
      await site.close();
    }
    // A fresh visit shows the same pending request (read from the chain, nothing kept in the page).
    const desktop = await openSite(VIEWPORTS.desktop);
    try {
      await desktop.page.waitForSelector('[data-request] [data-status="pending"]');
      await desktop.page.screenshot({ path: join(SCREENSHOTS, 'async-pending-1280.png'), fullPage: true });
      expect(desktop.errors).toEqual([]);
    } finally {
      await desktop.close();
    }
  }, 180_000);

  it('after the cooldown (anvil time travel) both requests are ready and one claim pays exactly their assets', async () => {
    await rpc('evm_increaseTime', [SEVEN_DAYS + 1]);
    await rpc('evm_mine');
    const site = await openSite(VIEWPORTS.phone);
    try {
      const { page } = site;
      await page.waitForSelector('[data-request] [data-status="claimable"]');
      await page.waitForFunction(() => document.querySelectorAll('[data-status="claimable"]').length === 2);
      await expect(page.locator('[data-request] [data-status]').allTextContents()).resolves.toEqual([
        'Ready to claim',
        'Ready to claim',
      ]);
      await expect(page.locator('[data-claim]').isVisible()).resolves.toBe(true);
      await expect(textOf(page.locator('[data-claim]'))).resolves.toMatch(/^Claim 2[45]\.\d{6} USDe$/);
      await page.screenshot({ path: join(SCREENSHOTS, 'async-claimable-375.png'), fullPage: true });

      const before = await read<bigint>(vault.asset, TestStablecoin.abi, 'balanceOf', [VISITOR.address]);
      await page.locator('[data-claim]').click();
      await waitForMessage(page, 'Claimed');
      const after = await read<bigint>(vault.asset, TestStablecoin.abi, 'balanceOf', [VISITOR.address]);
      expect(after - before).toBe(requestedAssets);
      expect(
        await read<bigint[]>(vault.address, YieldVault.abi, 'openRedeemRequests', [VISITOR.address]),
      ).toEqual([]);
      await page.waitForFunction(() => (document.querySelector('[data-requests]') as HTMLElement).hidden);
      await page.screenshot({ path: join(SCREENSHOTS, 'async-claimed-375.png'), fullPage: true });
      expect(site.errors).toEqual([]);
    } finally {
      await site.close();
    }
  }, 120_000);

  it('once sunset, the notice says withdrawals go through the cooldown (never "at any time") and the request stays offered', async () => {
    expect((await call('POST', `/${siteUrl.split('/').at(-1)}/sunset`)).status).toBe(200);
    const site = await openSite(VIEWPORTS.phone);
    try {
      const { page } = site;
      const notice = await textOf(page.getByTestId('sunset-notice'));
      expect(notice).not.toMatch(/any time/);
      expect(notice.replace(/\s+/g, ' ')).toMatch(
        /While sUSDe's withdrawal cooldown is on, you request the withdrawal and claim it once the cooldown ends/,
      );
      await expect(page.locator('[data-action="deposit"]').count()).resolves.toBe(0);
      await page.waitForSelector('[data-action="request"]:not([hidden])');
      await expect(page.locator('[data-action="withdraw"]').isVisible()).resolves.toBe(false);
      await page.screenshot({ path: join(SCREENSHOTS, 'async-sunset-375.png'), fullPage: true });
      expect(site.errors).toEqual([]);
    } finally {
      await site.close();
    }
  }, 120_000);
});
