import { erc20Abi, formatUnits, getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { LOCAL_TESTNET_CHAIN_IDS } from '../../dev/localChains';
import { sessionIdToBytes16 } from '../../chain/depositAddress';
import { Forwarder, LocalSwapRouter, StakingComposer } from '../../contracts/artifacts';
import { SESSION_EVENT_TYPES } from '../../webhooks/events';
import { verifyWebhook } from '../../webhooks/verifyWebhook';
import {
  payDeposit,
  startSettlementStack,
  testChainClient,
  type SettlementStack,
} from '../settlement/settlementStack';
import { startWebhookReceiver, type WebhookReceiver } from './receiver';

/**
 * The session lifecycle events on the local chains, each reaching a real receiver signed: a paid session
 * sends session.confirming then session.completed with what the chain shows the merchant received; an
 * unpaid one session.expired; a partial one session.underpaid with what arrived; a failed settlement
 * session.failed, then, once retry-forwarder succeeds, session.completed. An endpoint created as SPEC
 * describes (no `events`) receives only session.confirming.
 */
const ETHEREUM_SEPOLIA = 11155111;
const BASE_SEPOLIA = 84532;
const CONFIRMATIONS = 3;

interface ReceivedEvent {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown> & { session: Record<string, unknown> };
}

describe('session lifecycle events end to end (local chains, real receivers)', () => {
  let stack: SettlementStack;
  let receiver: WebhookReceiver;
  let specReceiver: WebhookReceiver;
  let secret: string;
  let specSecret: string;

  beforeAll(async () => {
    stack = await startSettlementStack();
    receiver = await startWebhookReceiver();
    specReceiver = await startWebhookReceiver();
    const all = await stack.app.request('/v1/webhooks', {
      method: 'POST',
      headers: stack.sk,
      json: { url: `${receiver.baseUrl}/hooks`, events: [...SESSION_EVENT_TYPES] },
    });
    expect(all.status).toBe(201);
    expect(all.body.events).toEqual([...SESSION_EVENT_TYPES]);
    secret = all.body.secret;
    const spec = await stack.app.request('/v1/webhooks', {
      method: 'POST',
      headers: stack.sk,
      json: { url: `${specReceiver.baseUrl}/hooks` },
    });
    expect(spec.status).toBe(201);
    specSecret = spec.body.secret;
  }, 300_000);
  afterAll(async () => {
    await receiver?.close();
    await specReceiver?.close();
    await stack?.stop();
  });

  /** Verified events of one session as they arrived at a receiver, once `count` of them are there. */
  async function eventsOf(
    sessionId: string,
    count: number,
    { at = receiver, key = secret, timeoutMs = 90_000 } = {},
  ): Promise<ReceivedEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = at.received
        .map((request) => {
          const event = verifyWebhook<ReceivedEvent>(
            request.rawBody,
            request.headers['x-service-signature'] as string,
            key,
          );
          expect(request.headers['x-service-event-id']).toBe(event.id);
          return event;
        })
        .filter((event) => event.data.session?.id === sessionId);
      if (events.length >= count || Date.now() > deadline) return events;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function storedEventTypes(sessionId: string): Promise<string[]> {
    const rows = await stack.db
      .selectFrom('events')
      .select('type')
      .where('session_id', '=', sessionId)
      .orderBy('created_at')
      .execute();
    return rows.map((row) => row.type);
  }

  async function createSession(json: object = {}, app = stack.app) {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '10', merchantName: 'Tea Shop', sandboxMode: true, ...json },
    });
    expect(created.status).toBe(201);
    const read = await stack.app.request(`/v1/sessions/${created.body.id}`);
    return { ...created.body, ...read.body } as {
      id: string;
      expiresAt: string;
      createdAt: string;
      paymentOptions: Array<{
        chainId: number;
        symbol: string;
        tokenAddress: Address;
        depositAddress: Address;
        amount: string;
      }>;
    };
  }

  const optionOf = (session: Awaited<ReturnType<typeof createSession>>, chainId: number, symbol: string) =>
    session.paymentOptions.find((option) => option.chainId === chainId && option.symbol === symbol)!;

  const pay = (chainId: number, option: ReturnType<typeof optionOf>, amount = BigInt(option.amount)) =>
    payDeposit(stack.chain(chainId), { token: option.tokenAddress, to: option.depositAddress, amount });

  const confirm = (chainId: number) => stack.chain(chainId).mine({ blocks: CONFIRMATIONS + 1 });

  const susdeBalance = (owner: Address) =>
    stack.chain(ETHEREUM_SEPOLIA).readContract({
      address: stack.contracts(ETHEREUM_SEPOLIA).susde!,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
    });

  async function summaryOf(sessionId: string) {
    return (
      await stack.app.request(`/v1/merchants/me/sessions/${sessionId}`, { headers: stack.merchant.auth })
    ).body;
  }

  it('a paid session sends session.confirming, then session.completed with the sUSDe the chain shows the merchant received', async () => {
    const merchant = getAddress(stack.merchant.account.address);
    const before = await susdeBalance(merchant);
    const session = await createSession();
    await pay(ETHEREUM_SEPOLIA, optionOf(session, ETHEREUM_SEPOLIA, 'USDC'));
    await confirm(ETHEREUM_SEPOLIA);

    const events = await eventsOf(session.id, 2);
    expect(events.map((event) => event.type)).toEqual(['session.confirming', 'session.completed']);
    const [confirming, completed] = events as [ReceivedEvent, ReceivedEvent];
    const summary = await summaryOf(session.id);
    const row = await stack.db
      .selectFrom('settlements')
      .selectAll()
      .where('session_id', '=', session.id)
      .executeTakeFirstOrThrow();
    const receipt = await stack
      .chain(ETHEREUM_SEPOLIA)
      .getTransactionReceipt({ hash: row.flush_tx_hash as Hex });
    const [flushed] = parseEventLogs({ abi: Forwarder.abi, eventName: 'Flushed', logs: receipt.logs });
    const received = (await susdeBalance(merchant)) - before;
    expect(received).toBeGreaterThan(0n);

    const sessionFields = {
      id: session.id,
      merchantName: 'Tea Shop',
      amount: '10',
      expiresAt: session.expiresAt,
      createdAt: session.createdAt,
      paidAt: summary.paidAt,
      txHash: summary.txHash,
    };
    expect(confirming.data).toEqual({ session: { ...sessionFields, status: 'confirming' } });
    expect(completed).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
      type: 'session.completed',
      createdAt: expect.any(String),
      data: {
        session: { ...sessionFields, status: 'completed' },
        settlement: {
          chainId: ETHEREUM_SEPOLIA,
          txHash: receipt.transactionHash,
          asset: 'sUSDe',
          assetAmount: formatUnits(flushed!.args.usdeAmount, 18),
          shares: formatUnits(received, 18),
        },
      },
    });
    // SPEC's key order, and the settlement's as the design lists it.
    expect(Object.keys(completed.data)).toEqual(['session', 'settlement']);
    expect(Object.keys(completed.data.session)).toEqual([
      'id',
      'merchantName',
      'amount',
      'status',
      'expiresAt',
      'createdAt',
      'paidAt',
      'txHash',
    ]);
    expect(Object.keys(completed.data.settlement as object)).toEqual([
      'chainId',
      'txHash',
      'asset',
      'assetAmount',
      'shares',
    ]);
    expect(await storedEventTypes(session.id)).toEqual(['session.confirming', 'session.completed']);

    // The endpoint created as SPEC describes heard session.confirming and nothing else.
    const specEvents = await eventsOf(session.id, 1, { at: specReceiver, key: specSecret });
    expect(specEvents.map((event) => event.type)).toEqual(['session.confirming']);
    expect(specEvents[0]!.id).toBe(confirming.id);
    // SPEC's webhookDelivered is about session.confirming: it turns true with that delivery.
    expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body).toEqual({
      status: 'completed',
      webhookDelivered: true,
    });
  }, 150_000);

  it('a layer-2 payment completes with the staking transaction and shares of the settlement chain', async () => {
    const merchant = getAddress(stack.merchant.account.address);
    const before = await susdeBalance(merchant);
    const session = await createSession({ amount: '7' });
    await pay(BASE_SEPOLIA, optionOf(session, BASE_SEPOLIA, 'USDC'));
    await confirm(BASE_SEPOLIA);

    const events = await eventsOf(session.id, 2);
    expect(events.map((event) => event.type)).toEqual(['session.confirming', 'session.completed']);
    const [composed] = await stack.chain(ETHEREUM_SEPOLIA).getContractEvents({
      address: stack.contracts(ETHEREUM_SEPOLIA).stakingComposer!,
      abi: StakingComposer.abi,
      eventName: 'Composed',
      args: { sessionId: sessionIdToBytes16(session.id) },
      fromBlock: 0n,
    });
    const received = (await susdeBalance(merchant)) - before;
    expect(events[1]!.data.settlement).toEqual({
      chainId: ETHEREUM_SEPOLIA,
      txHash: composed!.transactionHash,
      asset: 'sUSDe',
      assetAmount: formatUnits(composed!.args.usdeAmount!, 18),
      shares: formatUnits(received, 18),
    });
    expect(composed!.args.shares).toBe(received);
  }, 150_000);

  /**
   * A session that expires a few seconds from now: the API's clock runs 55 s behind the chain's with the
   * shortest expiry (60 s), as the money-safety test does.
   */
  async function shortLivedSession() {
    const chainNowMs = Number((await stack.chain(ETHEREUM_SEPOLIA).getBlock()).timestamp) * 1000;
    const offsetMs = chainNowMs - Date.now() - 52_000;
    const app = await stack.startApp({ now: () => new Date(Date.now() + offsetMs) });
    const session = await createSession({ amount: '2', expiresInSec: 60 }, app);
    const waitPastExpiry = async () => {
      const expiresAtMs = Date.parse(session.expiresAt);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAtMs - chainNowMs) + 1_000));
      // Every monitor of the session's chains scans a block stamped after expiry (expiry is by chain time).
      for (const chainId of LOCAL_TESTNET_CHAIN_IDS) await confirm(chainId);
    };
    return { session, waitPastExpiry };
  }

  it('an unpaid session sends session.expired, and a partly paid one session.underpaid with the amount received', async () => {
    const unpaid = await shortLivedSession();
    const partial = await shortLivedSession();
    await pay(ETHEREUM_SEPOLIA, optionOf(partial.session, ETHEREUM_SEPOLIA, 'USDC'), 1_250_000n);
    await confirm(ETHEREUM_SEPOLIA);
    await unpaid.waitPastExpiry();
    await partial.waitPastExpiry();

    const [expired] = await eventsOf(unpaid.session.id, 1);
    expect(expired).toMatchObject({
      type: 'session.expired',
      data: {
        session: {
          id: unpaid.session.id,
          status: 'expired',
          amount: '2',
          expiresAt: unpaid.session.expiresAt,
          paidAt: null,
          txHash: null,
        },
      },
    });
    expect(Object.keys(expired!.data)).toEqual(['session']);
    const [underpaid] = await eventsOf(partial.session.id, 1);
    expect(underpaid).toMatchObject({
      type: 'session.underpaid',
      data: {
        session: { id: partial.session.id, status: 'expired', paidAt: null, txHash: null },
        receivedAmount: '1.25',
      },
    });
    expect(Object.keys(underpaid!.data)).toEqual(['session', 'receivedAmount']);
    expect(await storedEventTypes(unpaid.session.id)).toEqual(['session.expired']);
    expect(await storedEventTypes(partial.session.id)).toEqual(['session.underpaid']);
    // Neither reached the endpoint that lists only session.confirming.
    expect(await eventsOf(unpaid.session.id, 0, { at: specReceiver, key: specSecret })).toEqual([]);
  }, 150_000);

  it('a settlement made to fail sends session.failed with the reason; after retry-forwarder succeeds, session.completed', async () => {
    const contracts = stack.contracts(ETHEREUM_SEPOLIA);
    const owner = testChainClient(
      stack.rpcUrls[ETHEREUM_SEPOLIA]!,
      ETHEREUM_SEPOLIA,
      ANVIL_DEV_ACCOUNTS[0].privateKey,
    );
    const setRate = async (rateE18: bigint) => {
      const hash = await owner.writeContract({
        address: contracts.swapRouter!,
        abi: LocalSwapRouter.abi,
        functionName: 'setRate',
        args: [contracts.usdt!, contracts.usde!, rateE18],
      });
      await owner.waitForTransactionReceipt({ hash });
    };
    const par = 10n ** 30n;
    await setRate((par * 98n) / 100n); // beyond the slippage allowed: the flush reverts
    try {
      const session = await createSession({ amount: '3', paymentOptionSymbols: ['USDT'] });
      await pay(ETHEREUM_SEPOLIA, optionOf(session, ETHEREUM_SEPOLIA, 'USDT'));
      await confirm(ETHEREUM_SEPOLIA);
      const untilFailed = await eventsOf(session.id, 2);
      expect(untilFailed.map((event) => event.type)).toEqual(['session.confirming', 'session.failed']);
      expect(untilFailed[1]!.data).toMatchObject({
        session: { id: session.id, status: 'failed' },
        failureReason: expect.stringMatching(/^InsufficientOutput\(/),
      });
      expect(Object.keys(untilFailed[1]!.data)).toEqual(['session', 'failureReason']);
      expect((await summaryOf(session.id)).failureReason).toBe(untilFailed[1]!.data.failureReason);

      await setRate(par);
      const retried = await stack.app.request(`/v1/merchants/me/sessions/${session.id}/retry-forwarder`, {
        method: 'POST',
        headers: stack.merchant.auth,
      });
      expect(retried.status).toBe(202);
      const all = await eventsOf(session.id, 3);
      expect(all.map((event) => event.type)).toEqual([
        'session.confirming',
        'session.failed',
        'session.completed',
      ]);
      expect(all[2]!.data).toMatchObject({
        session: { id: session.id, status: 'completed' },
        settlement: { chainId: ETHEREUM_SEPOLIA, asset: 'sUSDe', assetAmount: '3' },
      });
      expect(await storedEventTypes(session.id)).toEqual([
        'session.confirming',
        'session.failed',
        'session.completed',
      ]);
    } finally {
      await setRate(par);
    }
  }, 150_000);
});
