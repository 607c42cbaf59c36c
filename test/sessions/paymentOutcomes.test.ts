import { formatUnits, type Address } from 'viem';
import { createChainMonitorActivities } from '../../activities/chainMonitor';
import { writeCheckpoint } from '../../db/deposits';
import { depositSignallerFor } from '../../workflowClient/sessions';
import { webhookDeliveryStarterFor } from '../../workflowClient/webhookDeliveries';
import { SESSION_EVENT_TYPES } from '../../webhooks/events';
import { verifyWebhook } from '../../webhooks/verifyWebhook';
import { payDeposit, startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { startWebhookReceiver, type WebhookReceiver } from '../webhooks/receiver';

/**
 * Payment outcomes (issue 41) on a local chain with a real receiver: an overpaid session shows what it
 * received and sends session.overpaid with the exact amounts; a payment mined after expiry sends
 * session.paid_late once, with its transaction, even when the range is scanned again. The checkout page
 * tells the payer what happens next in both cases.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;

interface ReceivedEvent {
  id: string;
  type: string;
  data: Record<string, unknown> & { session: Record<string, unknown> };
}

interface Session {
  id: string;
  expiresAt: string;
  paymentOptions: Array<{ chainId: number; symbol: string; tokenAddress: Address; depositAddress: Address }>;
}

describe('payment outcomes: overpaid and late payments', () => {
  let stack: SettlementStack;
  let receiver: WebhookReceiver;
  let secret: string;

  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] });
    receiver = await startWebhookReceiver();
    const endpoint = await stack.app.request('/v1/webhooks', {
      method: 'POST',
      headers: stack.sk,
      json: { url: `${receiver.baseUrl}/hooks`, events: [...SESSION_EVENT_TYPES] },
    });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.events).toEqual(expect.arrayContaining(['session.overpaid', 'session.paid_late']));
    secret = endpoint.body.secret;
  }, 300_000);
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  /** Verified events of one session as they arrived, once `count` of them are there. */
  async function eventsOf(sessionId: string, count: number, timeoutMs = 90_000): Promise<ReceivedEvent[]> {
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
        .filter((event) => event.data.session?.id === sessionId);
      if (events.length >= count || Date.now() > deadline) return events;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function createSession(json: object, app = stack.app): Promise<Session> {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { merchantName: 'Tea Shop', sandboxMode: true, paymentOptionSymbols: ['USDC'], ...json },
    });
    expect(created.status).toBe(201);
    return { ...created.body, ...(await stack.app.request(`/v1/sessions/${created.body.id}`)).body };
  }

  const usdcOption = (session: Session) =>
    session.paymentOptions.find((option) => option.chainId === ETHEREUM_SEPOLIA && option.symbol === 'USDC')!;
  const pay = (session: Session, amount: bigint) =>
    payDeposit(stack.chain(ETHEREUM_SEPOLIA), {
      token: usdcOption(session).tokenAddress,
      to: usdcOption(session).depositAddress,
      amount,
    });
  const confirm = () => stack.chain(ETHEREUM_SEPOLIA).mine({ blocks: CONFIRMATIONS + 1 });

  async function storedEvents(sessionId: string) {
    return stack.db
      .selectFrom('events')
      .select(['id', 'type'])
      .where('session_id', '=', sessionId)
      .orderBy('created_at')
      .execute();
  }

  it('an overpaid session shows receivedAmount and sends session.overpaid with the exact amounts, once', async () => {
    const session = await createSession({ amount: '25' });
    // 30.000001 USDC for a 25 USD order: the surplus is exact to the token's last digit.
    await pay(session, 30_000_001n);
    await confirm();

    const events = await eventsOf(session.id, 3);
    expect(events.map((event) => event.type)).toEqual([
      'session.confirming',
      'session.completed',
      'session.overpaid',
    ]);
    const overpaid = events[2]!;
    expect(overpaid.data).toEqual({
      session: expect.objectContaining({ id: session.id, status: 'completed', amount: '25' }),
      receivedAmount: '30.000001',
      overpaidAmount: '5.000001',
    });
    expect(Object.keys(overpaid.data)).toEqual(['session', 'receivedAmount', 'overpaidAmount']);
    expect((await storedEvents(session.id)).map((event) => event.type)).toEqual([
      'session.confirming',
      'session.completed',
      'session.overpaid',
    ]);

    const publicRead = await stack.app.request(`/v1/sessions/${session.id}`);
    expect(publicRead.body).toMatchObject({ status: 'completed', amount: '25', receivedAmount: '30.000001' });
    const summary = await stack.app.request(`/v1/merchants/me/sessions/${session.id}`, {
      headers: stack.merchant.auth,
    });
    expect(summary.body.receivedAmount).toBe('30.000001');
    const list = await stack.app.request('/v1/merchants/me/sessions?limit=100', {
      headers: stack.merchant.auth,
    });
    expect(list.body.data.find((row: { id: string }) => row.id === session.id).receivedAmount).toBe(
      '30.000001',
    );

    // The payments export's row: what arrived, what was swept, where, and the sUSDe the merchant got.
    const settlement = await stack.db
      .selectFrom('settlements')
      .selectAll()
      .where('session_id', '=', session.id)
      .executeTakeFirstOrThrow();
    const today = new Date().toISOString().slice(0, 10);
    const csv = await stack.app.request(`/v1/sessions/export?from=${today}&to=${today}`, {
      headers: stack.sk,
    });
    const row = csv.text.split('\r\n').find((line) => line.startsWith(session.id))!;
    expect(row.split(',').slice(2)).toEqual([
      'completed',
      '25',
      '30.000001',
      '30.000001',
      String(ETHEREUM_SEPOLIA),
      'USDC',
      summary.body.txHash,
      settlement.delivery_tx_hash,
      formatUnits(BigInt(settlement.shares!), 18),
      '0',
      '',
    ]);

    const page = await stack.app.request(`/pay/${session.id}`);
    expect(page.text).toContain('data-testid="state-overpaid"');
    expect(page.text).toContain('<strong data-testid="overpaid-amount">$5.000001</strong>');
    expect(page.text).toContain('may refund it to you');
  }, 150_000);

  it('a session paid exactly sends no session.overpaid and reads receivedAmount equal to its amount', async () => {
    const session = await createSession({ amount: '4' });
    await pay(session, 4_000_000n);
    await confirm();
    const events = await eventsOf(session.id, 2);
    expect(events.map((event) => event.type)).toEqual(['session.confirming', 'session.completed']);
    expect((await stack.app.request(`/v1/sessions/${session.id}`)).body.receivedAmount).toBe('4');
    const page = await stack.app.request(`/pay/${session.id}`);
    expect(page.text).not.toContain('state-overpaid');
  }, 150_000);

  /**
   * A session that expires a few seconds from now: the API's clock runs 52 s behind the chain's with the
   * shortest expiry (60 s), as the lifecycle events' test does.
   */
  async function shortLivedSession(amount: string) {
    const chainNowMs = Number((await stack.chain(ETHEREUM_SEPOLIA).getBlock()).timestamp) * 1000;
    const offsetMs = chainNowMs - Date.now() - 52_000;
    const app = await stack.startApp({ now: () => new Date(Date.now() + offsetMs) });
    const session = await createSession({ amount, expiresInSec: 60 }, app);
    const waitPastExpiry = async () => {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, Date.parse(session.expiresAt) - chainNowMs) + 1_000),
      );
      await confirm();
    };
    return { session, waitPastExpiry };
  }

  it('a payment mined after expiry sends session.paid_late once with its transaction, also when its range is scanned again', async () => {
    const { session, waitPastExpiry } = await shortLivedSession('2');
    await waitPastExpiry();
    const [expired] = await eventsOf(session.id, 1);
    expect(expired!.type).toBe('session.expired');

    const txHash = await pay(session, 2_000_000n);
    await confirm();
    const events = await eventsOf(session.id, 2);
    expect(events.map((event) => event.type)).toEqual(['session.expired', 'session.paid_late']);
    expect(events[1]!.data).toEqual({
      session: expect.objectContaining({ id: session.id, status: 'expired', paidAt: null, txHash: null }),
      receivedAmount: '2',
      txHash,
    });
    expect(Object.keys(events[1]!.data)).toEqual(['session', 'receivedAmount', 'txHash']);
    const lateEvent = events[1]!.id;

    // The range scanned again from before the payment (a fresh checkpoint key: a rescan or a retried
    // scan): the same event comes back, and no second delivery starts.
    const receipt = await stack.chain(ETHEREUM_SEPOLIA).getTransactionReceipt({ hash: txHash });
    const monitorId = `${stack.prefix}rescan-${session.id}`;
    await writeCheckpoint(stack.db, {
      monitorId,
      chainId: ETHEREUM_SEPOLIA,
      block: receipt.blockNumber - 1n,
    });
    const { scanDeposits } = createChainMonitorActivities({
      db: stack.db,
      networks: stack.networks,
      signalDepositDetected: depositSignallerFor(stack.temporal),
      startWebhookDelivery: webhookDeliveryStarterFor(stack.temporal, stack.taskQueues.webhooks),
    });
    const rescan = await scanDeposits({ chainId: ETHEREUM_SEPOLIA, monitorId, maxBlockRange: 1_000 });
    expect(rescan.late).toBeGreaterThanOrEqual(1);
    expect(await storedEvents(session.id)).toEqual([
      { id: expired!.id, type: 'session.expired' },
      { id: lateEvent, type: 'session.paid_late' },
    ]);
    const deliveries = await stack.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', '=', lateEvent)
      .execute();
    expect(deliveries).toHaveLength(1);

    expect((await stack.app.request(`/v1/sessions/${session.id}`)).body).toMatchObject({
      status: 'expired',
      receivedAmount: '2',
    });
    const page = await stack.app.request(`/pay/${session.id}`);
    expect(page.text).toContain('data-testid="state-paid-late"');
    expect(page.text).toContain('<strong data-testid="late-amount">$2.00</strong>');
    expect(page.text).toContain('A payment arrived after this request expired');
  }, 150_000);
});
