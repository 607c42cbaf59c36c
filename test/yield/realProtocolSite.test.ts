import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { encodeFunctionData, parseUnits, type Address } from 'viem';
import { IStakedUSDe, TestStablecoin, YieldVault } from '../../contracts/artifacts';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { startLocalChains, type LocalChains } from '../../dev/services/localChains';
import { launchChromium } from '../checkout/chromium';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { openConnectedSite, waitForMessage } from './siteBrowser';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * End to end on the real-protocol local set (dev/services/localChains.ts with `protocols: 'real'`, what
 * `LOCAL_SETTLEMENT_PROTOCOLS=real npm start` runs): its Ethereum Sepolia carries the Ethena-like sUSDe
 * (LocalStakedUSDeV2, the seven-day cooldown on) and the vault factory over it. Through the HTTP API: deploy
 * options, create, deploy; then in chromium on the branded site: deposit, request a withdrawal, time travel past
 * the cooldown on anvil, claim, checking the balances on chain. Screenshots in test-output/yield/.
 */

const BASE = '/v1/merchants/me/yield-deployments';
const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'yield');
const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 900 };
const VISITOR = ANVIL_DEV_ACCOUNTS[5];

let local: LocalChains;
let world: YieldWorld;
let browser: Browser;
let merchant: SignedInMerchant;
let contracts: Record<string, Address | undefined>;

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const started = Date.now();
  [local, browser] = await Promise.all([
    startLocalChains({ chainIds: [YIELD_CHAIN], protocols: 'real' }),
    launchChromium(),
  ]);
  // The figure the report quotes: how long the real-protocol chain takes to come up inside the suite.
  console.info(`real-protocol chain ${YIELD_CHAIN} deployed in ${Date.now() - started} ms`);
  const chain = local.chains.find((entry) => entry.chainId === YIELD_CHAIN)!;
  contracts = chain.contracts as Record<string, Address | undefined>;
  world = await startYieldWorld({ yieldChain: { rpcUrl: chain.rpcUrl, contracts } });
  merchant = await signInNewMerchant(world.app);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
  await local?.stop();
});

const call = (method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

const client = () => world.publicClient(YIELD_CHAIN);
const read = <T>(address: Address, abi: unknown, functionName: string, args: unknown[] = []) =>
  client().readContract({ address, abi, functionName, args } as never) as Promise<T>;
const rpc = (method: string, params: unknown[] = []) =>
  client().request({ method, params } as never) as Promise<unknown>;

describe('a yield deployment on the real-protocol local chain (Ethena-like sUSDe, cooldown on)', () => {
  let vault: { address: Address; asset: Address };
  let siteUrl: string;

  it('is offered, created and deployed through the HTTP API over the set’s sUSDe', async () => {
    expect(await read<number>(contracts.susde!, IStakedUSDe.abi, 'cooldownDuration')).toBe(7 * 24 * 3600);
    const options = await call('GET', `/deploy-options?chainId=${YIELD_CHAIN}`);
    expect(options.status).toBe(200);
    expect(options.body).toMatchObject({
      chainId: YIELD_CHAIN,
      sandbox: true,
      vaultFactory: contracts.yieldVaultFactory,
      permittedTokens: [{ symbol: 'USDe', address: contracts.usde, decimals: 18 }],
    });
    const draft = await call('POST', '', {
      name: 'Real Savings',
      chainId: YIELD_CHAIN,
      branding: { displayName: 'Real Savings', primaryColor: '#1e3a8a', accentColor: '#047857' },
    });
    expect(draft.status).toBe(201);
    expect((await call('POST', `/${draft.body.id}/deploy`)).status).toBe(202);
    const deployment = await waitFor(
      async () => (await call('GET', `/${draft.body.id}`)).body,
      (body) => body.status !== 'deploying',
    );
    expect(deployment).toMatchObject({ status: 'active', failureReason: null });
    vault = deployment.contracts.vaults[0];
    siteUrl = `${world.app.baseUrl}/sites/${deployment.id}`;
    // The vault stakes in the set's sUSDe and redeems asynchronously while its cooldown is on.
    expect(await read<Address>(vault.address, YieldVault.abi, 'stakedVault')).toBe(contracts.susde);
    expect(await read<boolean>(vault.address, YieldVault.abi, 'supportsInterface', ['0x620ee8e4'])).toBe(
      true,
    );
    const hash = (await rpc('eth_sendTransaction', [
      {
        from: VISITOR.address,
        to: vault.asset,
        data: encodeFunctionData({
          abi: TestStablecoin.abi,
          functionName: 'mint',
          args: [VISITOR.address, parseUnits('100', 18)],
        }),
      },
    ])) as `0x${string}`;
    await client().waitForTransactionReceipt({ hash });
  }, 180_000);

  it('deposits, requests, and after the cooldown (anvil time travel) claims exactly the requested assets in chromium', async () => {
    const usdeOf = () => read<bigint>(vault.asset, TestStablecoin.abi, 'balanceOf', [VISITOR.address]);
    const startBalance = await usdeOf();
    const site = await openConnectedSite(browser, {
      siteUrl,
      rpcUrl: world.rpcUrl(YIELD_CHAIN),
      visitor: VISITOR.address,
      viewport: PHONE,
    });
    try {
      const { page } = site;
      await page.locator('[data-action="deposit"] input').fill('40');
      await page.locator('[data-action="deposit"] button[type="submit"]').click();
      await waitForMessage(page, 'Deposited');
      expect(startBalance - (await usdeOf())).toBe(parseUnits('40', 18));
      const sUsdeHeld = await read<bigint>(contracts.susde!, IStakedUSDe.abi, 'balanceOf', [vault.address]);
      expect(sUsdeHeld).toBeGreaterThan(0n);
      await page.screenshot({ path: join(SCREENSHOTS, 'real-deposited-375.png'), fullPage: true });

      await page.locator('[data-message]').evaluate((element) => (element.textContent = ''));
      await page.locator('[data-action="request"] [data-max]').click();
      await page.locator('[data-action="request"] button[type="submit"]').click();
      await waitForMessage(page, 'Requested');
      expect(await read<bigint>(vault.address, YieldVault.abi, 'balanceOf', [VISITOR.address])).toBe(0n);
      const [requestId] = await read<bigint[]>(vault.address, YieldVault.abi, 'openRedeemRequests', [
        VISITOR.address,
      ]);
      const [, , requestedAssets, claimableAt] = await read<[Address, bigint, bigint, bigint]>(
        vault.address,
        YieldVault.abi,
        'redeemRequest',
        [requestId],
      );
      // sUSDe's rounding takes at most a wei or two from the 40 USDe.
      expect(parseUnits('40', 18) - requestedAssets).toBeLessThanOrEqual(2n);
      await page.waitForSelector(`[data-request="${requestId}"] [data-status="pending"]`);
      await page.screenshot({ path: join(SCREENSHOTS, 'real-pending-375.png'), fullPage: true });
      expect(site.errors).toEqual([]);

      // Past the cooldown on the chain's clock.
      const now = (await client().getBlock()).timestamp;
      await rpc('evm_increaseTime', [Number(claimableAt - now) + 1]);
      await rpc('evm_mine');
    } finally {
      await site.close();
    }

    const desktop = await openConnectedSite(browser, {
      siteUrl,
      rpcUrl: world.rpcUrl(YIELD_CHAIN),
      visitor: VISITOR.address,
      viewport: DESKTOP,
    });
    try {
      const { page } = desktop;
      await page.waitForSelector('[data-request] [data-status="claimable"]');
      await page.screenshot({ path: join(SCREENSHOTS, 'real-claimable-1280.png'), fullPage: true });
      const beforeClaim = await usdeOf();
      const [requestId] = await read<bigint[]>(vault.address, YieldVault.abi, 'openRedeemRequests', [
        VISITOR.address,
      ]);
      const [, , requestedAssets] = await read<[Address, bigint, bigint, bigint]>(
        vault.address,
        YieldVault.abi,
        'redeemRequest',
        [requestId],
      );
      await page.locator('[data-claim]').click();
      await waitForMessage(page, 'Claimed');
      expect((await usdeOf()) - beforeClaim).toBe(requestedAssets);
      expect(startBalance - (await usdeOf())).toBeLessThanOrEqual(2n);
      expect(
        await read<bigint[]>(vault.address, YieldVault.abi, 'openRedeemRequests', [VISITOR.address]),
      ).toEqual([]);
      await page.waitForFunction(() => (document.querySelector('[data-requests]') as HTMLElement).hidden);
      await page.screenshot({ path: join(SCREENSHOTS, 'real-claimed-1280.png'), fullPage: true });
      expect(desktop.errors).toEqual([]);
    } finally {
      await desktop.close();
    }
  }, 240_000);
});
