import type { Browser, Page } from 'playwright-core';
import { DASHBOARD_SIGN_IN_LINK_TTL_MS, issueDashboardSignInLink } from '../../dev/dashboardSignInLink';
import { launchChromium } from '../checkout/chromium';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { openDashboard, openSignedIn, screenshot, seriousAccessibilityViolations, tokenIn } from './browser';

/**
 * Security review III, finding 3: a link can no longer sign the dashboard in (`#token=` is ignored), and
 * the dev stack's sign-in link carries a one-time code the server exchanges (once, within a minute)
 * on a page that names the account and asks before it replaces a signed-in one. In Debian's chromium.
 */
describe('dashboard sign-in from a link', () => {
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    [app, browser] = await Promise.all([startTestApp(), launchChromium()]);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  /**
   * Opens `url` in the tab as a followed link does (a new document, not a fragment change) and answers
   * the token the page's profile read (GET /v1/merchants/me) was sent with.
   */
  async function profileReadWith(page: Page, url: string): Promise<string | undefined> {
    await page.goto('about:blank');
    const read = page.waitForRequest(
      (request) => new URL(request.url()).pathname === '/v1/merchants/me' && request.method() === 'GET',
    );
    await page.goto(url);
    return (await read).headers().authorization?.replace(/^Bearer /, '');
  }

  it('a #token= fragment never switches the signed-in account (security review III, finding 3)', async () => {
    const victim = await signInNewMerchant(app);
    const attacker = await signInNewMerchant(app);
    const { page, context, errors } = await openDashboard(browser, app);
    await openSignedIn(page, app.baseUrl, victim.token, '/profile');
    await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();

    const sentWith = await profileReadWith(page, `${app.baseUrl}/dashboard/profile#token=${attacker.token}`);
    await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();
    expect(sentWith).toBe(victim.token);
    expect(await tokenIn(page)).toBe(victim.token);
    expect(errors).toEqual([]);
    await context.close();

    // A signed-out tab is not signed in by one either.
    const fresh = await openDashboard(browser, app);
    await fresh.page.goto(`${app.baseUrl}/dashboard/profile#token=${attacker.token}`);
    await fresh.page.getByRole('button', { name: 'Sign in with wallet' }).waitFor();
    expect(await tokenIn(fresh.page)).toBeNull();
    await fresh.context.close();
  });

  /** A sign-in link for `merchant` as the dev stack issues it, `ageMs` ago. */
  const linkFor = async (merchant: SignedInMerchant, ageMs = 0) =>
    (
      await issueDashboardSignInLink(app.db, {
        apiUrl: app.baseUrl,
        merchantId: merchant.merchantId,
        now: new Date(Date.now() - ageMs),
      })
    ).url;

  const storedCodes = (merchant: SignedInMerchant) =>
    app.db
      .selectFrom('dashboard_sign_in_codes')
      .selectAll()
      .where('merchant_id', '=', merchant.merchantId)
      .execute();

  it('a sign-in link’s code signs in once, within a minute, stored hashed, after naming the account (security review III, finding 3)', async () => {
    const merchant = await signInNewMerchant(app);
    const link = await linkFor(merchant);
    const code = /#code=(dsc_[\w-]+)$/.exec(link)![1]!;
    const [stored] = await storedCodes(merchant);
    expect(stored!.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(code.slice(4));

    const { page, context, errors, foreignRequests } = await openDashboard(browser, app);
    await page.goto(link);
    await page.getByRole('heading', { level: 2, name: `Sign in as ${merchant.account.address}?` }).waitFor();
    // The code is gone from the address bar, and nothing signed the tab in before the person says so.
    expect(page.url()).toBe(`${app.baseUrl}/dashboard/sign-in-link`);
    expect(await tokenIn(page)).toBeNull();
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-link-1280');
    await page.getByRole('button', { name: `Sign in as ${merchant.account.address}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const token = (await tokenIn(page))!;
    const me = await app.request('/v1/merchants/me', { headers: { authorization: `Bearer ${token}` } });
    expect(me.body.id).toBe(merchant.merchantId);
    expect(errors).toEqual([]);
    expect(foreignRequests).toEqual([]);
    await context.close();

    // Once: the same link again, in another tab, signs nothing in.
    const again = await openDashboard(browser, app);
    await again.page.goto(link);
    await again.page.getByRole('alert').filter({ hasText: 'Sign-in code was already used' }).waitFor();
    expect(await tokenIn(again.page)).toBeNull();
    await again.context.close();
    const replayed = await app.request('/v1/auth/sign-in-code', { method: 'POST', json: { code } });
    expect(replayed).toMatchObject({
      status: 401,
      body: { message: 'Sign-in code was already used; get a new link' },
    });
    // Concurrent exchanges of one code: exactly one wins.
    const raced = /#code=(dsc_[\w-]+)$/.exec(await linkFor(merchant))![1]!;
    const answers = await Promise.all(
      [1, 2, 3].map(() => app.request('/v1/auth/sign-in-code', { method: 'POST', json: { code: raced } })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401, 401]);

    // A minute: a link issued just over a minute ago is refused.
    const stale = await linkFor(merchant, DASHBOARD_SIGN_IN_LINK_TTL_MS + 1000);
    const late = await openDashboard(browser, app);
    await late.page.goto(stale);
    await late.page.getByRole('alert').filter({ hasText: 'Sign-in code has expired' }).waitFor();
    expect(await tokenIn(late.page)).toBeNull();
    await late.context.close();
  });

  it('a sign-in link asks before it replaces the signed-in account, naming both, and a no keeps it (security review III, finding 3)', async () => {
    const victim = await signInNewMerchant(app);
    const other = await signInNewMerchant(app);
    const { page, context, errors } = await openDashboard(browser, app);
    await openSignedIn(page, app.baseUrl, victim.token, '/profile');
    await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();

    await page.goto(await linkFor(other));
    await page
      .getByRole('alert')
      .filter({ hasText: `This tab is signed in as ${victim.account.address}` })
      .waitFor();
    await page.getByText(`signs this tab in to the merchant account ${other.account.address}`).waitFor();
    expect(await tokenIn(page)).toBe(victim.token);
    const declined = page.waitForResponse((response) => response.url().endsWith('/v1/auth/logout'));
    await page.getByRole('button', { name: `Stay signed in as ${victim.account.address}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(await tokenIn(page)).toBe(victim.token);
    // The token the link gave was signed out at once.
    const revoked = (await declined)
      .request()
      .headers()
      .authorization!.replace(/^Bearer /, '');
    expect(revoked).not.toBe(victim.token);
    expect(
      (await app.request('/v1/merchants/me', { headers: { authorization: `Bearer ${revoked}` } })).status,
    ).toBe(401);

    // Saying yes switches.
    await page.goto(await linkFor(other));
    await page.getByRole('button', { name: `Sign in as ${other.account.address}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const switched = (await tokenIn(page))!;
    const me = await app.request('/v1/merchants/me', { headers: { authorization: `Bearer ${switched}` } });
    expect(me.body.id).toBe(other.merchantId);
    expect(errors).toEqual([]);
    await context.close();
  });
});
