import type { Address } from 'viem';
import { WEBHOOK_EVENT_GUIDE, WEBHOOK_EVENT_TYPES } from '../../webhooks/eventTypes';
import { verifyWebhook } from '../../webhooks/verifyWebhook';
import { payDeposit, type SettlementStack } from '../settlement/settlementStack';
import type { ReceivedWebhook, WebhookReceiver } from '../webhooks/receiver';
import { DESKTOP, PHONE, screenshot, seriousAccessibilityViolations, type DashboardPage } from './browser';
import { useSettlementDashboard } from './settlementDashboard';

/**
 * Issue 48 in chromium on a settlement world of its own (local chains, the worker, Temporal, Postgres):
 * the add-endpoint form offers every event type the service accepts, grouped, one line each; an
 * endpoint added with `session.completed` ticked gets that event when a session is paid, and its
 * page lists the delivery; its types change with a PATCH (the API's message beside the checkboxes on
 * a 400); "Send a test event" reaches a local receiver, signed with the endpoint's secret.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;

describe('the webhook form and its event types in chromium', () => {
  const world = useSettlementDashboard('/webhooks');
  let stack: SettlementStack;
  let receiver: WebhookReceiver;
  let dashboard: DashboardPage;
  let secret: string;
  let endpointId: string;

  beforeAll(() => {
    ({ stack, receiver, dashboard } = world());
  });

  const arrivalsOf = (type: string): ReceivedWebhook[] =>
    receiver.received.filter((request) => (JSON.parse(request.rawBody) as { type: string }).type === type);

  async function arrivalOf(type: string): Promise<ReceivedWebhook> {
    for (let count = 1; arrivalsOf(type).length === 0; count += 1) await receiver.waitFor(count, 120_000);
    return arrivalsOf(type)[0]!;
  }

  it('offers every type the service accepts, grouped, one line each, session.confirming ticked; adds an endpoint with session.completed', async () => {
    const { page } = dashboard;
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    const form = page.locator('#endpoint-form');
    const groups = form.locator('fieldset.event-group');
    expect(await groups.locator('legend').allTextContents()).toEqual([
      'Sessions',
      'Refunds',
      'Subscriptions',
      'Endpoints',
    ]);
    for (const type of WEBHOOK_EVENT_TYPES) {
      const box = form.getByLabel(type, { exact: true });
      expect({ type, checked: await box.isChecked() }).toEqual({
        type,
        checked: type === 'session.confirming',
      });
      // Its line on when it is sent, tied to the checkbox for screen readers.
      const hintId = (await box.getAttribute('aria-describedby'))!;
      expect(await form.locator(`[id="${hintId}"]`).textContent()).toBe(WEBHOOK_EVENT_GUIDE[type].sentWhen);
    }
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    for (const [viewport, name] of [
      [PHONE, 'webhook-form-375'],
      [DESKTOP, 'webhook-form-1280'],
    ] as const) {
      await page.setViewportSize(viewport);
      await screenshot(page, name);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBe(0);
    }

    // No type ticked: the API's 400 beside the checkboxes, nothing saved.
    await page.getByLabel('URL').fill(`${receiver.baseUrl}/hook`);
    await form.getByLabel('session.confirming', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await form
      .locator('fieldset.event-types .field-error')
      .filter({ hasText: 'events: must name at least one event type' })
      .waitFor();
    expect(
      (await stack.app.request('/v1/merchants/me/webhooks', { headers: stack.merchant.auth })).body.data,
    ).toEqual([]);

    await form.getByLabel('session.confirming', { exact: true }).check();
    await form.getByLabel('session.completed', { exact: true }).check();
    await page.getByLabel('Description (optional)').fill('Order service');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByTestId('secret').waitFor();
    secret = (await page.getByTestId('secret').textContent())!;
    const [created] = (await stack.app.request('/v1/merchants/me/webhooks', { headers: stack.merchant.auth }))
      .body.data;
    expect(created).toMatchObject({ events: ['session.confirming', 'session.completed'] });
    endpointId = created.id;
    // Its row shows the types it receives; the form is back to the default.
    const row = page.getByTestId('endpoint');
    expect(
      await row.getByRole('list', { name: 'Event types it receives' }).locator('li').allTextContents(),
    ).toEqual(['session.confirming', 'session.completed']);
    expect(await form.getByLabel('session.completed', { exact: true }).isChecked()).toBe(false);
    await screenshot(page, 'webhook-endpoint-added-1280');
  });

  it('a paid session sends session.completed to it, listed on the endpoint’s deliveries page', async () => {
    const { page } = dashboard;
    const created = await stack.app.request('/v1/merchants/me/sessions', {
      method: 'POST',
      headers: stack.merchant.auth,
      json: { amount: '7.25', merchantName: 'Order service', sandboxMode: true },
    });
    expect(created.status).toBe(201);
    const session = (await stack.app.request(`/v1/sessions/${created.body.id}`)).body as {
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
    const completed = await arrivalOf('session.completed');
    const event = verifyWebhook<{ id: string }>(
      completed.rawBody,
      completed.headers['x-service-signature'] as string,
      secret,
    );
    expect(event).toMatchObject({ type: 'session.completed', data: { session: { id: created.body.id } } });

    await page.getByRole('link', { name: 'Order service' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
    const delivery = page.getByTestId('delivery').filter({ hasText: 'session.completed' });
    await delivery.getByText('succeeded', { exact: true }).waitFor();
    await delivery.locator('summary').click();
    await delivery.getByText(event.id).waitFor();
    await delivery.getByText(/succeeded \(HTTP 200\)/).waitFor();
    await screenshot(page, 'webhook-endpoint-deliveries-1280');
  }, 240_000);

  it('changes its types with a PATCH, the API’s message beside the checkboxes on a 400', async () => {
    const { page } = dashboard;
    const edit = page.getByRole('region', { name: 'What it receives' });
    await edit.getByLabel('session.confirming', { exact: true }).uncheck();
    await edit.getByLabel('session.completed', { exact: true }).uncheck();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit
      .locator('fieldset.event-types .field-error')
      .filter({ hasText: 'events: must name at least one event type' })
      .waitFor();
    const stored = () =>
      stack.app
        .request(`/v1/merchants/me/webhooks/${endpointId}`, { headers: stack.merchant.auth })
        .then((response) => response.body.events as string[]);
    expect(await stored()).toEqual(['session.confirming', 'session.completed']);
    // At 375 px, once the delivery chart has followed the narrower page: nothing wider than the screen.
    await page.setViewportSize(PHONE);
    await page.waitForFunction(() => document.documentElement.scrollWidth === window.innerWidth);
    await screenshot(page, 'webhook-endpoint-invalid-375');
    await page.setViewportSize(DESKTOP);

    await edit.getByLabel('session.completed', { exact: true }).check();
    await edit.getByLabel('session.failed', { exact: true }).check();
    await edit.getByLabel('endpoint.disabled', { exact: true }).check();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByText('Saved: pending retries use the new values.').waitFor();
    expect(await stored()).toEqual(['session.completed', 'session.failed', 'endpoint.disabled']);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
  });

  it('sends a test event that arrives signed with the endpoint’s secret and is listed among its deliveries', async () => {
    const { page } = dashboard;
    await page.getByRole('button', { name: /^Send a test event to / }).click();
    const note = page.getByRole('status').filter({ hasText: /^Test event evt_/ });
    await note.waitFor();
    const eventId = (await note.locator('code').textContent())!;
    const arrived = await arrivalOf('endpoint.test');
    expect(arrived.headers['x-service-event-id']).toBe(eventId);
    // Verified at the receiver as a merchant's server would: the raw body against the whsec_ secret.
    const event = verifyWebhook(arrived.rawBody, arrived.headers['x-service-signature'] as string, secret);
    expect(event).toMatchObject({
      id: eventId,
      type: 'endpoint.test',
      data: { endpoint: { id: endpointId, url: `${receiver.baseUrl}/hook` } },
    });
    // The page follows the delivery until its attempt is recorded, without a reload.
    const delivery = page.getByTestId('delivery').filter({ hasText: 'endpoint.test' });
    await delivery.getByText('succeeded', { exact: true }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'webhook-test-event-1280');
  }, 120_000);
});
