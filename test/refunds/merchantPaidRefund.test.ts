import { randomBytes } from 'node:crypto';
import { encodeFunctionData, erc20Abi, getAddress, type Address } from 'viem';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events';
import { verifyWebhook } from '../../webhooks/verifyWebhook';
import { payDeposit, startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { startWebhookReceiver, type WebhookReceiver } from '../webhooks/receiver';

/**
 * A merchant-paid refund on a local chain (issue 41): a completed session's refund holds the prepared
 * transfer; the merchant sends it from its own wallet and reports the transaction; the service reads it from
 * the chain (a transaction of the wrong amount, recipient or token, or one already used, is refused with a
 * clear 4xx and nothing changes), the refund's workflow waits for the chain's confirmations, the refund
 * succeeds and `refund.succeeded` is delivered, signed, with the refund and the session.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;

interface ReceivedEvent {
  id: string;
  type: string;
  data: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

describe('merchant-paid refunds', () => {
  let stack: SettlementStack;
  let receiver: WebhookReceiver;
  let secret: string;

  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] });
    receiver = await startWebhookReceiver();
    const endpoint = await stack.app.request('/v1/webhooks', {
      method: 'POST',
      headers: stack.sk,
      json: { url: `${receiver.baseUrl}/hooks`, events: [...WEBHOOK_EVENT_TYPES] },
    });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.events).toEqual(expect.arrayContaining(['refund.succeeded', 'refund.failed']));
    secret = endpoint.body.secret;
  }, 300_000);
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  /** The verified events received so far that match, once `count` of them are there. */
  async function eventsWhere(
    match: (event: ReceivedEvent) => boolean,
    count: number,
    timeoutMs = 90_000,
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

  /** A 25 USD session paid in USDC and completed (settled to the payout address). */
  async function completedSession() {
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '25', sandboxMode: true, paymentOptionSymbols: ['USDC'] },
    });
    expect(created.status).toBe(201);
    const session = (await stack.app.request(`/v1/sessions/${created.body.id}`)).body;
    const usdc = session.paymentOptions.find(
      (option: { chainId: number }) => option.chainId === ETHEREUM_SEPOLIA,
    );
    await payDeposit(chain(), { token: usdc.tokenAddress, to: usdc.depositAddress, amount: 25_000_000n });
    await confirm();
    const [completed] = await eventsWhere(
      (event) => event.type === 'session.completed' && event.data.session?.id === session.id,
      1,
    );
    expect(completed).toBeDefined();
    return { id: session.id as string, token: getAddress(usdc.tokenAddress) as Address };
  }

  const report = (sessionId: string, refundId: string, txHash: string) =>
    stack.app.request(`/v1/sessions/${sessionId}/refunds/${refundId}/transaction`, {
      method: 'POST',
      headers: stack.sk,
      json: { txHash },
    });

  it('verifies the reported transfer on chain, waits for its confirmations, succeeds and delivers refund.succeeded', async () => {
    const session = await completedSession();
    const payer = randomAddress();
    const created = await stack.app.request(`/v1/sessions/${session.id}/refunds`, {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '10.5', address: payer, reason: 'one item out of stock' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'awaiting_payment',
      source: 'merchant',
      chainId: ETHEREUM_SEPOLIA,
      token: 'USDC',
      transfer: { chainId: ETHEREUM_SEPOLIA, tokenAddress: session.token, to: payer, amount: '10500000' },
    });
    const refundId: string = created.body.id;

    // Transactions that are not the prepared transfer: refused, naming what is wrong; nothing changes.
    const wrongAmount = await payDeposit(chain(), { token: session.token, to: payer, amount: 10_499_999n });
    const wrongRecipient = await payDeposit(chain(), {
      token: session.token,
      to: randomAddress(),
      amount: 10_500_000n,
    });
    const usdt = getAddress(stack.contracts(ETHEREUM_SEPOLIA).usdt!);
    const wrongToken = await payDeposit(chain(), { token: usdt, to: payer, amount: 10_500_000n });
    const refusals = [
      [wrongAmount, 'the transaction transfers another amount than the refund’s 10500000 base units'],
      [wrongRecipient, `the transaction transfers nothing to the refund address ${payer}`],
      [wrongToken, `the transaction transfers another token than the refund’s (${session.token})`],
      [`0x${'ab'.repeat(32)}`, 'no mined transaction with this hash on the refund’s chain'],
    ] as const;
    for (const [txHash, message] of refusals) {
      const refused = await report(session.id, refundId, txHash);
      expect([txHash, refused.status, refused.body.errors ?? refused.text]).toEqual([
        txHash,
        400,
        [{ field: 'txHash', message }],
      ]);
    }
    const malformed = await report(session.id, refundId, '0x1234');
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].field).toBe('txHash');
    const unchanged = await stack.app.request(`/v1/sessions/${session.id}/refunds/${refundId}`, {
      headers: stack.sk,
    });
    expect(unchanged.body).toMatchObject({ status: 'awaiting_payment', txHash: null });

    // The merchant sends exactly the prepared transfer from its own wallet: the payer's balance rises.
    const before = await balanceOf(session.token, payer);
    const paid = await payDeposit(chain(), { token: session.token, to: payer, amount: 10_500_000n });
    expect((await balanceOf(session.token, payer)) - before).toBe(10_500_000n);
    const reported = await report(session.id, refundId, paid);
    expect(reported.status).toBe(200);
    expect(reported.body).toMatchObject({ id: refundId, status: 'processing', txHash: paid.toLowerCase() });
    // Reporting it again answers the same; the same transaction for another refund is refused.
    expect((await report(session.id, refundId, paid)).status).toBe(200);
    const second = await stack.app.request(`/v1/merchants/me/sessions/${session.id}/refunds`, {
      method: 'POST',
      headers: stack.merchant.auth,
      json: { amount: '10.5', address: payer },
    });
    expect(second.status).toBe(201);
    const reused = await stack.app.request(
      `/v1/merchants/me/sessions/${session.id}/refunds/${second.body.id}/transaction`,
      { method: 'POST', headers: stack.merchant.auth, json: { txHash: paid } },
    );
    expect(reused.status).toBe(409);
    expect(reused.body.message).toBe('Transaction already pays another refund');
    // Processing: money moved, so it can no longer be canceled.
    const cancel = await stack.app.request(`/v1/sessions/${session.id}/refunds/${refundId}/cancel`, {
      method: 'POST',
      headers: stack.sk,
    });
    expect([cancel.status, cancel.body.message]).toEqual([
      409,
      'Refund is processing: it can no longer be canceled',
    ]);

    await confirm();
    const [succeeded, ...again] = await eventsWhere(
      (event) => event.type === 'refund.succeeded' && event.data.refund?.id === refundId,
      1,
    );
    expect(again).toEqual([]);
    expect(succeeded!.data).toEqual({
      refund: expect.objectContaining({
        id: refundId,
        sessionId: session.id,
        amount: '10.5',
        status: 'succeeded',
        source: 'merchant',
        claimUrl: null,
        address: payer,
        txHash: paid.toLowerCase(),
        reason: 'one item out of stock',
      }),
      session: expect.objectContaining({ id: session.id, status: 'completed', amount: '25' }),
    });
    expect(Object.keys(succeeded!.data)).toEqual(['refund', 'session']);
    const read = await stack.app.request(`/v1/sessions/${session.id}/refunds/${refundId}`, {
      headers: stack.sk,
    });
    expect(read.body.status).toBe('succeeded');
    const sessionRead = await stack.app.request(`/v1/sessions/${session.id}`);
    // 10.5 refunded; the second refund (awaiting payment) holds another 10.5 of the 25.
    expect(sessionRead.body).toMatchObject({ refundedAmount: '10.5', refundableAmount: '4' });
    const stored = await stack.db
      .selectFrom('events')
      .select(['type', 'refund_id'])
      .where('refund_id', '=', refundId)
      .execute();
    expect(stored).toEqual([{ type: 'refund.succeeded', refund_id: refundId }]);
  }, 240_000);

  it('fails a refund whose verified transaction a reorganisation turned into a revert, and delivers refund.failed', async () => {
    const session = await completedSession();
    const payer = randomAddress();
    const created = await stack.app.request(`/v1/sessions/${session.id}/refunds`, {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '5', address: payer },
    });
    const refundId: string = created.body.id;
    const wallet = chain();
    // The merchant's wallet holds the tokens (minted), then signs the transfer; both mined, then reported.
    const snapshot = await wallet.snapshot();
    await payDeposit(wallet, { token: session.token, to: wallet.account.address, amount: 5_000_000n });
    const transfer = await wallet.prepareTransactionRequest({
      to: session.token,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payer, 5_000_000n] }),
      gas: 100_000n,
    });
    const signed = await wallet.signTransaction(transfer);
    const paid = await wallet.sendRawTransaction({ serializedTransaction: signed });
    await wallet.waitForTransactionReceipt({ hash: paid });
    expect((await report(session.id, refundId, paid)).body.status).toBe('processing');

    // A reorganisation: the blocks are gone, the wallet's tokens with them; the same signed transaction is
    // mined again after another of the wallet's transactions took the place of the mint, and now reverts.
    await wallet.revert({ id: snapshot });
    const nonceBefore = transfer.nonce - 2;
    for (let nonce = nonceBefore; nonce < transfer.nonce; nonce += 1)
      await wallet.waitForTransactionReceipt({
        hash: await wallet.sendTransaction({ to: wallet.account.address, value: 0n, nonce }),
      });
    const again = await wallet.sendRawTransaction({ serializedTransaction: signed });
    expect(again).toBe(paid);
    expect((await wallet.waitForTransactionReceipt({ hash: paid })).status).toBe('reverted');
    await confirm();

    const [failed] = await eventsWhere(
      (event) => event.type === 'refund.failed' && event.data.refund?.id === refundId,
      1,
    );
    expect(failed!.data.refund).toMatchObject({
      status: 'failed',
      failureReason: 'the transaction reverted',
      txHash: paid.toLowerCase(),
      transfer: null,
    });
    // Its amount is refundable again; nothing was refunded.
    const read = await stack.app.request(`/v1/sessions/${session.id}`);
    expect(read.body).toMatchObject({ refundedAmount: '0', refundableAmount: '25' });
  }, 240_000);
});
