import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { erc20Abi, getAddress, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events';
import { verifyWebhook } from '../../webhooks/verifyWebhook';
import { launchChromium } from '../checkout/chromium';
import {
  DESKTOP,
  PHONE,
  openDashboard,
  openSignedIn,
  seriousAccessibilityViolations,
  type DashboardPage,
} from '../dashboard/browser';
import { payDeposit, startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { startWebhookReceiver, type WebhookReceiver } from '../webhooks/receiver';
import { injectWallet } from './injectedWallet';

/**
 * Issue 41's acceptance in chromium, on a settlement world of its own (a local chain, the worker, Temporal,
 * Postgres) with a webhook endpoint on loopback:
 * - a completed session paid back from the merchant's wallet: the dashboard's Refund form with the payer's
 *   address, "Send from my wallet" through an injected EIP-1193 wallet backed by an anvil account (it switches
 *   the wallet to the refund's chain, sends the prepared ERC-20 transfer, reports the mined transaction), the
 *   tokens at the payer's address, the refund `succeeded` on the page and `refund.succeeded` received with a
 *   valid signature; a refund above what is refundable is refused beside its field, and a claim-link refund
 *   shows its link once and is canceled;
 * - an overpaid session that held its surplus (`overpayment: "hold"`: paid 30 USDC on time for 25 USD, 25
 *   settled, 5 left in its capped forwarder) refunded through the claim link: the payer gives the address on
 *   the claim page, the merchant's payout address signs the authorization in the injected wallet on the
 *   dashboard, the operator relays it from the forwarder, the tokens reach the payer and `refund.succeeded` is
 *   received and verified.
 * The pages show no script error, make no foreign request and have no serious axe violation at 375 and
 * 1280 px; screenshots are kept in test-output/refunds.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;
const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'refunds');
/** The merchant's own wallet, which pays merchant-paid refunds (no service key uses it on this world's chain). */
const MERCHANT_WALLET = privateKeyToAccount(ANVIL_DEV_ACCOUNTS[4].privateKey);

interface ReceivedEvent {
  id: string;
  type: string;
  data: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

describe('refunds on the dashboard and the claim page in chromium', () => {
  let stack: SettlementStack;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let secret: string;
  const opened: DashboardPage[] = [];

  beforeAll(async () => {
    [stack, receiver, browser] = await Promise.all([
      startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] }),
      startWebhookReceiver(),
      launchChromium(),
    ]);
    const endpoint = await stack.app.request('/v1/webhooks', {
      method: 'POST',
      headers: stack.sk,
      json: { url: `${receiver.baseUrl}/hooks`, events: [...WEBHOOK_EVENT_TYPES] },
    });
    expect(endpoint.status).toBe(201);
    secret = endpoint.body.secret;
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await stack?.stop();
  });
  afterEach(async () => {
    for (const dashboard of opened.splice(0)) {
      expect(dashboard.errors).toEqual([]);
      expect(dashboard.foreignRequests).toEqual([]);
      await dashboard.context.close();
    }
  });

  /** The verified events received so far that match, once `count` of them are there (or the time is up). */
  async function eventsWhere(
    match: (event: ReceivedEvent) => boolean,
    count: number,
    timeoutMs = 120_000,
  ): Promise<ReceivedEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = receiver.received
        .map((request) =>
          verifyWebhook<ReceivedEvent>(
            request.rawBody,
            request.headers['x-service-signature'] as string,
            secret,
          ),
        )
        .filter(match);
      if (events.length >= count || Date.now() > deadline) return events;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const chain = () => stack.chain(ETHEREUM_SEPOLIA);
  const confirm = () => chain().mine({ blocks: CONFIRMATIONS + 1 });
  const balanceOf = (token: Address, owner: Address) =>
    chain().readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

  async function createSession(json: object, app = stack.app) {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { sandboxMode: true, paymentOptionSymbols: ['USDC'], merchantName: 'Tea Shop', ...json },
    });
    expect(created.status).toBe(201);
    const session = (await stack.app.request(`/v1/sessions/${created.body.id}`)).body;
    const usdc = session.paymentOptions.find(
      (option: { chainId: number }) => option.chainId === ETHEREUM_SEPOLIA,
    );
    return {
      id: session.id as string,
      expiresAt: session.expiresAt as string,
      token: getAddress(usdc.tokenAddress) as Address,
      depositAddress: getAddress(usdc.depositAddress) as Address,
    };
  }

  /** The dashboard signed in as the stack's merchant at the session's page, with the injected wallet. */
  async function sessionPage(
    sessionId: string,
    wallet: { account: ReturnType<typeof privateKeyToAccount>; chainId: number },
  ) {
    const dashboard = await openDashboard(browser, stack.app, { viewport: DESKTOP });
    opened.push(dashboard);
    dashboard.page.on('dialog', (dialog) => void dialog.accept());
    const injected = await injectWallet(dashboard.context, { ...wallet, rpcUrls: stack.rpcUrls });
    await openSignedIn(dashboard.page, stack.app.baseUrl, stack.merchant.token, `/sessions/${sessionId}`);
    await dashboard.page.getByTestId('refund-refundable').waitFor();
    return { dashboard, page: dashboard.page, injected };
  }

  const refundItem = (page: Page, refundId: string) => page.locator(`[data-refund-id="${refundId}"]`);
  const waitForStatus = (page: Page, refundId: string, status: string, timeout = 120_000) =>
    refundItem(page, refundId)
      .getByTestId('refund-status')
      .getByText(status, { exact: true })
      .waitFor({ timeout });

  async function refundsOf(sessionId: string) {
    const list = await stack.app.request(`/v1/merchants/me/sessions/${sessionId}/refunds`, {
      headers: stack.merchant.auth,
    });
    expect(list.status).toBe(200);
    return list.body.data as { id: string; status: string; txHash: string | null; address: string | null }[];
  }

  /** Waits for the refund's transaction to be known (relayed or reported), then mines its confirmations. */
  async function confirmRefundTransaction(sessionId: string, refundId: string) {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const refund = (await refundsOf(sessionId)).find((candidate) => candidate.id === refundId)!;
      if (refund.txHash) break;
      if (Date.now() > deadline) throw new Error(`refund ${refundId} has no transaction (${refund.status})`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await confirm();
  }

  /** Axe clean and a full-page screenshot at both widths, back at 1280 px after. */
  async function checkBothWidths(page: Page, name: string) {
    for (const [viewport, width] of [
      [PHONE, 375],
      [DESKTOP, 1280],
    ] as const) {
      await page.setViewportSize(viewport);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
    }
  }

  it('pays a completed session back from the merchant’s wallet: Send from my wallet, the tokens at the payer’s address, refund.succeeded verified', async () => {
    const session = await createSession({ amount: '25' });
    await payDeposit(chain(), { token: session.token, to: session.depositAddress, amount: 25_000_000n });
    await confirm();
    const [completed] = await eventsWhere(
      (event) => event.type === 'session.completed' && event.data.session?.id === session.id,
      1,
    );
    expect(completed).toBeDefined();
    // The merchant's wallet holds the USDC it pays back with; it starts on another chain (Ethereum).
    await payDeposit(chain(), { token: session.token, to: MERCHANT_WALLET.address, amount: 10_500_000n });
    const { page, injected } = await sessionPage(session.id, { account: MERCHANT_WALLET, chainId: 1 });
    expect(await page.getByTestId('refund-received').textContent()).toBe('$25.00');
    expect(await page.getByTestId('refund-refundable').textContent()).toBe('$25.00');
    // The default mode, in the Summary: any surplus would have gone with the rest.
    expect(await page.getByTestId('session-overpayment').textContent()).toBe(
      'Sent to your payout address with the rest',
    );
    expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('25');

    // More than is refundable: the API's refusal beside the amount, nothing created.
    await page.getByLabel('Amount (USD)').fill('25.01');
    await page.getByTestId('refund-submit').click();
    await page.getByText('amount: must be at most the session’s refundable amount (25)').waitFor();
    expect(await refundsOf(session.id)).toEqual([]);

    const payer = randomAddress();
    await page.getByLabel('Amount (USD)').fill('10.5');
    await page.getByLabel('Reason (optional)').fill('one item out of stock');
    await page.getByLabel('Payer’s address (optional)').fill(payer.toLowerCase());
    await page.getByTestId('refund-submit').click();
    await page.getByText('Refund of $10.50 created.').waitFor();
    const [refund] = await refundsOf(session.id);
    expect(refund).toMatchObject({ status: 'awaiting_payment', address: payer });
    await waitForStatus(page, refund!.id, 'awaiting payment');
    expect(await refundItem(page, refund!.id).getByTestId('refund-amount').textContent()).toBe(
      '$10.50 in USDC',
    );
    await checkBothWidths(page, 'dashboard-refund-awaiting-payment');

    // A transaction reported by hand that is not on the chain: the service's refusal beside the hash.
    const item = refundItem(page, refund!.id);
    await item.getByText('Sent it another way? Report the transaction').click();
    await item.getByLabel('Transaction hash').fill(`0x${'ab'.repeat(32)}`);
    await item.getByRole('button', { name: 'Report transaction' }).click();
    await item.getByText('txHash: no mined transaction with this hash on the refund’s chain').waitFor();
    expect((await refundsOf(session.id))[0]).toMatchObject({ status: 'awaiting_payment', txHash: null });

    const before = await balanceOf(session.token, payer);
    await item.getByTestId('refund-pay').click();
    await waitForStatus(page, refund!.id, 'processing');
    // The wallet was switched to the refund's chain, then sent the transfer: the payer has the tokens.
    expect(injected.requests).toEqual(
      expect.arrayContaining(['wallet_switchEthereumChain', 'eth_sendTransaction']),
    );
    expect(injected.chainId()).toBe(ETHEREUM_SEPOLIA);
    expect((await balanceOf(session.token, payer)) - before).toBe(10_500_000n);
    await confirmRefundTransaction(session.id, refund!.id);
    await waitForStatus(page, refund!.id, 'succeeded');
    await page.getByTestId('refund-refunded').getByText('$10.50', { exact: true }).waitFor();
    expect(await page.getByTestId('refund-refundable').textContent()).toBe('$14.50');
    const txHash = (await refundsOf(session.id))[0]!.txHash!;
    expect(
      await refundItem(page, refund!.id).getByTestId('refund-tx').locator('a').getAttribute('href'),
    ).toBe(`https://sepolia.etherscan.io/tx/${txHash}`);

    const [succeeded, ...again] = await eventsWhere(
      (event) => event.type === 'refund.succeeded' && event.data.refund?.id === refund!.id,
      1,
    );
    expect(again).toEqual([]);
    expect(succeeded!.data.refund).toMatchObject({
      id: refund!.id,
      status: 'succeeded',
      source: 'merchant',
      amount: '10.5',
      address: payer,
      txHash,
      reason: 'one item out of stock',
    });
    expect(succeeded!.data.session).toMatchObject({ id: session.id, status: 'completed' });
    await checkBothWidths(page, 'dashboard-refund-succeeded');

    // Without an address: the claim link is shown once, with its copy button; canceled while nothing moved.
    await page.getByLabel('Amount (USD)').fill('1');
    await page.getByTestId('refund-submit').click();
    const claimUrl = await page.getByTestId('refund-claim-url').textContent();
    expect(claimUrl).toMatch(/^https?:\/\/[^/]+\/refund\/[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: `Copy link: ${claimUrl}` }).waitFor();
    const claimRefund = (await refundsOf(session.id)).find(
      (candidate) => candidate.status === 'awaiting_address',
    )!;
    await waitForStatus(page, claimRefund.id, 'awaiting address');
    await refundItem(page, claimRefund.id).getByTestId('refund-cancel').click();
    await waitForStatus(page, claimRefund.id, 'canceled');
    // The session's amounts follow on its next read: the canceled dollar is refundable again.
    await page.getByTestId('refund-refundable').getByText('$14.50', { exact: true }).waitFor();
  }, 300_000);

  /**
   * An overpaid session that holds its overpayment (`overpayment: "hold"`): the customer paid 30 USDC on time for
   * its 25 USD, the session completed with 25 settled, and the surplus stayed in its capped forwarder.
   */
  async function overpaidSessionHoldingTheSurplus() {
    const session = await createSession({ amount: '25', overpayment: 'hold' });
    await payDeposit(chain(), { token: session.token, to: session.depositAddress, amount: 30_000_000n });
    await confirm();
    const [overpaid] = await eventsWhere(
      (event) => event.type === 'session.overpaid' && event.data.session?.id === session.id,
      1,
    );
    expect(overpaid!.data).toMatchObject({ receivedAmount: '30', overpaidAmount: '5' });
    expect(overpaid!.data.session).toMatchObject({ status: 'completed' });
    const read = await stack.app.request(`/v1/sessions/${session.id}`);
    expect(read.body).toMatchObject({ overpayment: 'hold', settledAmount: '25', receivedAmount: '30' });
    expect(await balanceOf(session.token, session.depositAddress)).toBe(5_000_000n);
    return session;
  }

  it('shows a held overpayment in the session’s Summary and refunds the surplus from its forwarder through the claim link and the payout address’s authorization', async () => {
    const session = await overpaidSessionHoldingTheSurplus();
    const { page, injected } = await sessionPage(session.id, {
      account: stack.merchant.account,
      chainId: ETHEREUM_SEPOLIA,
    });
    expect(await page.getByTestId('refund-received').textContent()).toBe('$30.00');
    // The Summary says the surplus stayed for a refund (the screenshots below show it beside Received and Settled).
    expect(await page.getByTestId('session-overpayment').textContent()).toBe(
      'Kept at the deposit address for you to refund',
    );
    await page.getByLabel('Amount (USD)').fill('5');
    await page.getByLabel('Reason (optional)').fill('paid 5 USDC too much');
    await page.getByTestId('refund-submit').click();
    const claimUrl = (await page.getByTestId('refund-claim-url').textContent())!;
    const [refund] = await refundsOf(session.id);
    expect(refund).toMatchObject({ status: 'awaiting_address', address: null });
    await waitForStatus(page, refund!.id, 'awaiting address');

    // The payer, on a phone, gives the address on the claim page.
    const payer = randomAddress();
    const phone = await browser.newContext({ viewport: PHONE });
    const claimPage = await phone.newPage();
    const claimProblems: string[] = [];
    claimPage.on('pageerror', (error) => claimProblems.push(String(error)));
    claimPage.on('console', (message) => {
      if (message.type() === 'error') claimProblems.push(message.text());
    });
    // The link names the service's public address; the test's app listens on its own port.
    await claimPage.goto(`${stack.app.baseUrl}${new URL(claimUrl).pathname}`);
    expect(await claimPage.getByTestId('refund-amount').textContent()).toBe('$5.00');
    expect(await seriousAccessibilityViolations(claimPage)).toEqual([]);
    await claimPage.screenshot({ path: join(SCREENSHOTS, 'forwarder-claim-form-375.png'), fullPage: true });
    await claimPage.getByTestId('claim-chain').selectOption(String(ETHEREUM_SEPOLIA));
    await claimPage.getByTestId('claim-address').fill(payer);
    await claimPage.getByTestId('claim-confirm').check();
    await claimPage.getByTestId('claim-submit').click();
    await claimPage.getByTestId('claim-received').waitFor();
    expect(await claimPage.locator('[data-claim-address]').textContent()).toBe(payer);
    expect(await claimPage.locator('[data-claim-hint]').textContent()).toBe(
      'Paid in USDC on Ethereum Sepolia.',
    );
    expect(await seriousAccessibilityViolations(claimPage)).toEqual([]);
    await claimPage.screenshot({
      path: join(SCREENSHOTS, 'forwarder-claim-received-375.png'),
      fullPage: true,
    });
    await claimPage.setViewportSize(DESKTOP);
    expect(await seriousAccessibilityViolations(claimPage)).toEqual([]);
    await claimPage.screenshot({
      path: join(SCREENSHOTS, 'forwarder-claim-received-1280.png'),
      fullPage: true,
    });
    expect(claimProblems).toEqual([]);
    await phone.close();

    // The dashboard, still open, sees the address and asks the payout address for its authorization.
    await waitForStatus(page, refund!.id, 'awaiting authorization', 60_000);
    await checkBothWidths(page, 'dashboard-refund-awaiting-authorization');
    const before = await balanceOf(session.token, payer);
    await refundItem(page, refund!.id).getByTestId('refund-authorize').click();
    await waitForStatus(page, refund!.id, 'processing');
    expect(injected.requests).toContain('eth_signTypedData_v4');
    await confirmRefundTransaction(session.id, refund!.id);
    await waitForStatus(page, refund!.id, 'succeeded');
    expect((await balanceOf(session.token, payer)) - before).toBe(5_000_000n);
    expect(await balanceOf(session.token, session.depositAddress)).toBe(0n);
    await page.getByTestId('refund-refunded').getByText('$5.00', { exact: true }).waitFor();

    const [succeeded] = await eventsWhere(
      (event) => event.type === 'refund.succeeded' && event.data.refund?.id === refund!.id,
      1,
    );
    expect(succeeded!.data.refund).toMatchObject({
      id: refund!.id,
      status: 'succeeded',
      source: 'forwarder',
      amount: '5',
      address: payer,
      chainId: ETHEREUM_SEPOLIA,
    });
    expect(succeeded!.data.session).toMatchObject({ id: session.id });
    await checkBothWidths(page, 'dashboard-refund-forwarder-succeeded');
  }, 300_000);

  /**
   * A session that expired unpaid, then received 30 USDC late (the API's clock runs 52 s behind the chain's so
   * that the shortest expiry, 60 s, passes in seconds).
   */
  async function sessionPaidLate() {
    const chainNowMs = Number((await chain().getBlock()).timestamp) * 1000;
    const offsetMs = chainNowMs - Date.now() - 52_000;
    const app = await stack.startApp({ now: () => new Date(Date.now() + offsetMs) });
    const session = await createSession({ amount: '25', expiresInSec: 60 }, app);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(session.expiresAt) - chainNowMs) + 1_000),
    );
    await confirm();
    await eventsWhere(
      (event) => event.type === 'session.expired' && event.data.session?.id === session.id,
      1,
    );
    await payDeposit(chain(), { token: session.token, to: session.depositAddress, amount: 30_000_000n });
    await confirm();
    const [late] = await eventsWhere(
      (event) => event.type === 'session.paid_late' && event.data.session?.id === session.id,
      1,
    );
    expect(late!.data.receivedAmount).toBe('30');
    return session;
  }

  it('shows a late-paid session’s deposit as received on its timeline, with the session.paid_late event under it', async () => {
    const session = await sessionPaidLate();
    const { page } = await sessionPage(session.id, { account: MERCHANT_WALLET, chainId: ETHEREUM_SEPOLIA });
    const timeline = page.getByTestId('timeline');
    const deposit = timeline.locator('li.done').filter({ hasText: 'Deposit received' });
    await deposit.getByText('$30.00 received').waitFor();
    expect(await deposit.locator('.sr-only').textContent()).toBe(' (done)');
    await timeline
      .locator('li.bad')
      .filter({ hasText: /^Expired/ })
      .waitFor();
    expect(await timeline.getByText('Expired unpaid').count()).toBe(0);
    // The paid_late event sits right after the deposit step, before the settling step.
    const labels = await timeline.locator(':scope > li').allTextContents();
    const depositAt = labels.findIndex((text) => text.startsWith('Deposit received'));
    expect(labels[depositAt + 1]).toContain('session.paid_late');
    await checkBothWidths(page, 'dashboard-session-paid-late-timeline');
  }, 300_000);
});
