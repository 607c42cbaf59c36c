import { readFile } from 'node:fs/promises';
import type { Address } from 'viem';
import { payDeposit, type SettlementStack } from '../settlement/settlementStack';
import type { WebhookReceiver } from '../webhooks/receiver';
import { DESKTOP, PHONE, screenshot, type DashboardPage } from './browser';
import { useSettlementDashboard } from './settlementDashboard';

/**
 * The dashboard's main flows in chromium on a settlement world of its own (local chains, the worker,
 * Temporal, Postgres): add a webhook endpoint and rotate its secret on its page; create a payment link, pay it on
 * the local chain from the test and watch the session page reach completed with its webhook delivery
 * (event, endpoint, attempt) on the timeline without a reload; resend that delivery; download the sessions CSV; create an API key (shown once) and revoke it.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;

describe('dashboard main flows in chromium', () => {
  const world = useSettlementDashboard('/webhooks');
  let stack: SettlementStack;
  let receiver: WebhookReceiver;
  let dashboard: DashboardPage;
  let followedSessionId: string;

  beforeAll(() => {
    ({ stack, receiver, dashboard } = world());
  });

  it('adds a webhook endpoint (secret shown once) and rotates its secret with an overlap', async () => {
    const { page } = dashboard;
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByLabel('URL').fill('not a url');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    // The API's 400 beside the URL field, nothing saved.
    await page.locator('.field.invalid .field-error').filter({ hasText: /url/i }).waitFor();
    expect(
      (await stack.app.request('/v1/merchants/me/webhooks', { headers: stack.merchant.auth })).body.data,
    ).toEqual([]);

    await page.getByLabel('URL').fill(`${receiver.baseUrl}/hook`);
    await page.getByLabel('Description (optional)').fill('Shop backend');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = page.getByTestId('secret');
    await secret.waitFor();
    expect(await secret.textContent()).toMatch(/^whsec_/);
    const first = await secret.textContent();

    // Rotation is on the endpoint's own page.
    await page.getByRole('link', { name: 'Shop backend' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
    await page.getByLabel('Keep the old secret signing for (hours)').fill('2');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('The old secret keeps signing until').waitFor();
    expect(await secret.textContent()).toMatch(/^whsec_/);
    expect(await secret.textContent()).not.toBe(first);
    await screenshot(page, 'webhooks-rotated-1280');
  });

  it('creates a payment link, and the session page follows the on-chain payment to completed without a reload', async () => {
    const { page } = dashboard;
    await page.getByRole('link', { name: 'New payment link' }).click();
    await page.getByLabel('Amount (USD)').fill('12.5O');
    await page.getByRole('button', { name: 'Create payment link' }).click();
    await page
      .locator('.field.invalid .field-error')
      .filter({ hasText: /amount/i })
      .waitFor();

    await page.getByLabel('Amount (USD)').fill('12.50');
    await page.getByLabel('Shown as (merchant name)').fill('Dashboard shop');
    await page.getByLabel('Test mode (Sepolia testnets)').check();
    await page.getByRole('button', { name: 'Create payment link' }).click();
    const link = page.getByTestId('payment-url');
    await link.waitFor();
    const paymentUrl = (await link.textContent())!;
    const sessionId = /\/pay\/([0-9a-f-]{36})$/.exec(paymentUrl)![1]!;
    await page.getByRole('img', { name: `QR code of ${paymentUrl}` }).waitFor();
    await screenshot(page, 'payment-link-created-1280');

    await page.getByRole('link', { name: 'Follow this session' }).click();
    await page.getByTestId('session-status').getByText('awaiting payment').waitFor();
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    });

    const session = (await stack.app.request(`/v1/sessions/${sessionId}`)).body as {
      paymentOptions: {
        chainId: number;
        symbol: string;
        tokenAddress: Address;
        depositAddress: Address;
        amount: string;
      }[];
    };
    const option = session.paymentOptions.find(
      (entry) => entry.chainId === ETHEREUM_SEPOLIA && entry.symbol === 'USDC',
    )!;
    await payDeposit(stack.chain(ETHEREUM_SEPOLIA), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: BigInt(option.amount),
    });
    await stack.chain(ETHEREUM_SEPOLIA).mine({ blocks: CONFIRMATIONS + 1 });

    await page.getByTestId('session-status').getByText('completed').waitFor({ timeout: 120_000 });
    // Its webhook on the timeline, live: the session.confirming event and its delivery to our endpoint,
    // with the attempt that succeeded.
    const confirming = page.getByTestId('timeline-event').filter({ hasText: 'session.confirming' });
    await confirming.and(page.locator('li.done')).waitFor({ timeout: 60_000 });
    const delivery = confirming.getByTestId('timeline-delivery');
    await delivery.getByText('succeeded', { exact: true }).waitFor();
    await delivery.getByText(/Attempt 1: succeeded \(HTTP 200\)/).waitFor();
    expect(await delivery.locator('code.endpoint').textContent()).toBe(
      `${receiver.baseUrl.replace(/^https?:\/\//, '')}/hook`,
    );
    expect(navigations).toBe(0);
    expect(receiver.received.length).toBeGreaterThanOrEqual(1);
    await screenshot(page, 'session-completed-1280');
    await page.setViewportSize(PHONE);
    await screenshot(page, 'session-completed-375');
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBe(0);
    await page.setViewportSize(DESKTOP);
    followedSessionId = sessionId;
  }, 240_000);

  it('sends the session webhook again from its page; no settlement retry on a completed session', async () => {
    const { page } = dashboard;
    const eventsOf = (webhooks: typeof receiver.received) =>
      webhooks.map(
        (webhook) =>
          JSON.parse(webhook.rawBody) as { id: string; type: string; data: { session: { id: string } } },
      );
    const sent = eventsOf(receiver.received).filter((event) => event.data.session?.id === followedSessionId);
    expect(sent.length).toBeGreaterThanOrEqual(1);
    // retry-forwarder is offered only where the API allows it: a completed session with nothing unsettled is 409.
    expect(await page.getByRole('button', { name: 'Retry settlement' }).count()).toBe(0);
    expect(
      (
        await stack.app.request(`/v1/merchants/me/sessions/${followedSessionId}/retry-forwarder`, {
          method: 'POST',
          headers: stack.merchant.auth,
        })
      ).status,
    ).toBe(409);

    // The session's most recent event is session.completed, which the endpoint (subscribed to the
    // default session.confirming) does not take: the page says the resend went nowhere.
    const note = page.locator('.actions p');
    await page.getByRole('button', { name: 'Send the webhook again' }).click();
    await note.filter({ hasText: 'Sent nowhere' }).waitFor();
    const endpoint = (await stack.app.request('/v1/merchants/me/webhooks', { headers: stack.merchant.auth }))
      .body.data[0] as { id: string };
    const subscribed = await stack.app.request(`/v1/merchants/me/webhooks/${endpoint.id}`, {
      method: 'PATCH',
      headers: stack.merchant.auth,
      json: { events: ['session.confirming', 'session.completed'] },
    });
    expect(subscribed.status).toBe(200);

    const before = receiver.received.length;
    await page.getByRole('button', { name: 'Send the webhook again' }).click();
    await note.filter({ hasText: 'Webhook sent again to 1 endpoint.' }).waitFor();
    const [resent] = eventsOf((await receiver.waitFor(before + 1, 60_000)).slice(before));
    expect(resent!.type).toBe('session.completed');
    expect(resent!.data.session.id).toBe(followedSessionId);
    // And the page's timeline shows that event with its delivery, without a reload.
    await page
      .getByTestId('timeline-event')
      .filter({ hasText: 'session.completed' })
      .getByTestId('timeline-delivery')
      .getByText(/Attempt 1: succeeded \(HTTP 200\)/)
      .waitFor({ timeout: 30_000 });
    await screenshot(page, 'session-webhook-resent-1280');
  }, 120_000);

  it('shows the delivery with its attempts and resends it', async () => {
    const { page } = dashboard;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: 'Shop backend' }).click();
    const delivery = page.getByTestId('delivery').first();
    await delivery.getByText('succeeded', { exact: true }).waitFor();
    await delivery.locator('summary').click();
    await delivery.getByText(/succeeded \(HTTP 200\)/).waitFor();
    const before = receiver.received.length;
    await delivery.getByRole('button', { name: /^Resend event/ }).click();
    await page.getByText(/queued again as a new delivery/).waitFor();
    await receiver.waitFor(before + 1, 60_000);
    await screenshot(page, 'webhooks-deliveries-1280');
  }, 120_000);

  it('creates an API key shown once and revokes it', async () => {
    const { page } = dashboard;
    await page.setViewportSize(PHONE);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Label').fill('shop backend');
    await page.getByRole('button', { name: 'Create key' }).click();
    const raw = (await page.getByTestId('secret').textContent())!;
    expect(raw).toMatch(/^sk_/);
    const withKey = { authorization: `Bearer ${raw}` };
    expect((await stack.app.request('/v1/webhooks', { headers: withKey })).status).toBe(200);
    await screenshot(page, 'api-key-created-375');

    // Shown once: a reload lists the key by its prefix only.
    await page.reload();
    await page.getByRole('button', { name: 'Revoke shop backend' }).waitFor();
    expect(await page.content()).not.toContain(raw);
    await page.getByRole('button', { name: 'Revoke shop backend' }).click();
    await page.getByText('revoked').waitFor();
    expect((await stack.app.request('/v1/webhooks', { headers: withKey })).status).toBe(401);
    await page.setViewportSize(DESKTOP);
  });

  it('downloads the sessions CSV from the sessions page, with the paid session and what it received', async () => {
    const { page } = dashboard;
    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.getByTestId('sessions-export').waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download sessions CSV' }).click(),
    ]);
    const today = new Date().toISOString().slice(0, 10);
    const monthStart = `${today.slice(0, 8)}01`;
    expect(download.suggestedFilename()).toBe(`sessions-${monthStart}-${today}.csv`);
    const text = await readFile((await download.path())!, 'utf8');
    const [header, ...rows] = text.split('\r\n').filter((line) => line !== '');
    expect(header!.split(',').slice(0, 6)).toEqual([
      'id',
      'createdAt',
      'status',
      'amount',
      'receivedAmount',
      'settledAmount',
    ]);
    const row = rows.find((line) => line.startsWith(followedSessionId))!.split(',');
    expect(row.slice(2, 5)).toEqual(['completed', '12.5', '12.5']);
  }, 60_000);
});
