import type { Browser } from 'playwright-core';
import { launchChromium } from '../checkout/chromium';
import { ACCOUNTS } from '../chain/settlementFixture';
import {
  DAY,
  SEVEN_DAYS,
  USDE,
  claimShares,
  deposit,
  requestRedeem,
  travelTo,
} from '../yield/asyncVaultChain';
import { startCooldownDeployment, type CooldownDeployment } from '../yield/cooldownDeployment';
import {
  DESKTOP,
  openDashboard,
  openSignedIn,
  PHONE,
  screenshot,
  seriousAccessibilityViolations,
} from './browser';

/**
 * The dashboard's yield page lists each deployment's withdrawal requests (ERC-7540, sUSDe's seven-day cooldown
 * on a private chain): one claimed, one pending with the time left on the chain's clock, one pending longer;
 * after time travel the shorter one is claimable. Chromium at 375 and 1280 px, axe, screenshots in
 * test-output/dashboard/.
 */

let deployment: CooldownDeployment;
let browser: Browser;
const ids: { first: bigint; second: bigint; third: bigint; secondAt: bigint } = {} as never;

beforeAll(async () => {
  [deployment, browser] = await Promise.all([
    startCooldownDeployment({ name: 'Dashboard Savings' }),
    launchChromium(),
  ]);
  const { vault, chain } = deployment;
  const payerShares = await deposit(vault, 'payer', USDE('30'));
  const attackerShares = await deposit(vault, 'attacker', USDE('20'));
  const first = await requestRedeem(vault, 'payer', payerShares / 3n);
  await travelTo(chain, first.at + BigInt(3 * DAY));
  const second = await requestRedeem(vault, 'attacker', attackerShares);
  await travelTo(chain, first.at + BigInt(SEVEN_DAYS + 1));
  await claimShares(vault, 'payer', payerShares / 3n);
  const third = await requestRedeem(vault, 'payer', payerShares - payerShares / 3n);
  Object.assign(ids, {
    first: first.requestId,
    second: second.requestId,
    third: third.requestId,
    secondAt: second.at,
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await deployment?.world.stop();
});

async function openYieldPage(viewport: { width: number; height: number }) {
  const dashboard = await openDashboard(browser, deployment.world.app, { viewport });
  await openSignedIn(dashboard.page, deployment.world.app.baseUrl, deployment.merchant.token, '/yield');
  await dashboard.page.getByRole('heading', { level: 2, name: 'Dashboard Savings' }).waitFor();
  await dashboard.page.getByTestId('redeem-request').first().waitFor();
  return dashboard;
}

/** Each request row: its status and its cells as shown (a cell hidden on a narrow screen reads ""). */
const rowsOf = (page: Awaited<ReturnType<typeof openYieldPage>>['page']) =>
  page.getByTestId('redeem-request').evaluateAll((rows) =>
    rows.map((row) => ({
      status: row.getAttribute('data-status'),
      cells: [...row.querySelectorAll('td')].map((cell) =>
        (cell as HTMLElement).innerText.replace(/\s+/g, ' ').trim(),
      ),
    })),
  );

describe("the yield page's withdrawal requests", () => {
  for (const viewport of [PHONE, DESKTOP]) {
    it(`shows claimed and pending requests with the time left at ${viewport.width} px`, async () => {
      const dashboard = await openYieldPage(viewport);
      const { page } = dashboard;
      const rows = await rowsOf(page);
      expect(rows.map((row) => row.status)).toEqual(['pending', 'pending', 'claimed']);
      // Newest first: the payer's second request has the whole cooldown left, the other holder's about three days.
      expect(rows[0]!.cells.slice(0, 3)).toEqual([
        `#${ids.third}`,
        expect.stringMatching(/^20(\.\d+)? USDe$/),
        expect.stringMatching(/^pending (7 d 0 h|6 d 23 h) left$/),
      ]);
      expect(rows[1]!.cells.slice(0, 3)).toEqual([
        `#${ids.second}`,
        expect.stringMatching(/^20(\.\d+)? USDe$/),
        expect.stringMatching(/^pending (3 d 0 h|2 d 23 h) left$/),
      ]);
      expect(rows[2]!.cells.slice(0, 3)).toEqual([
        `#${ids.first}`,
        expect.stringMatching(/^(10|9\.9+\d*)(\.\d+)? USDe$/),
        'claimed',
      ]);
      if (viewport === DESKTOP) {
        await expect(
          page.getByTestId('redeem-request').nth(1).locator('code').textContent(),
        ).resolves.toMatch(new RegExp(`^${ACCOUNTS.attacker.address.slice(0, 6)}`));
      }
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBe(0);
      await screenshot(page, `yield-redeem-requests-${viewport.width}`);
      expect(dashboard.errors).toEqual([]);
      expect(dashboard.foreignRequests).toEqual([]);
      await dashboard.context.close();
    }, 120_000);
  }

  it('shows a request claimable once its cooldown has passed on the chain', async () => {
    await travelTo(deployment.chain, ids.secondAt + BigInt(SEVEN_DAYS + 1));
    const dashboard = await openYieldPage(PHONE);
    const rows = await rowsOf(dashboard.page);
    expect(rows.map((row) => row.status)).toEqual(['pending', 'claimable', 'claimed']);
    expect(rows[1]!.cells[2]).toBe('claimable');
    await screenshot(dashboard.page, 'yield-redeem-requests-claimable-375');
    expect(dashboard.errors).toEqual([]);
    await dashboard.context.close();
  }, 120_000);
});
