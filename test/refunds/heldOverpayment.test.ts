import { randomBytes } from 'node:crypto';
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import { predictDepositAddress } from '../../chain/depositAddress';
import { CappedForwarder } from '../../contracts/artifacts';
import { payDeposit, startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { pollUntil, refundEnded, signRefund } from './forwarderRefundSteps';

/**
 * `overpayment: "hold"` (issue 41; docs/decisions.md "Sessions: overpayment hold") through the API, the session
 * workflow and a local chain: the session's deposit address is a capped forwarder bound to its amount, the flush
 * settles exactly the amount, the surplus stays in the forwarder and is refunded from there on the payout
 * address's signature (source `forwarder`); a `settle` session keeps today's uncapped address.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;

const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

interface Option {
  chainId: number;
  symbol: string;
  tokenAddress: Address;
  depositAddress: Address;
  amount: string;
}

describe('sessions that hold an overpayment', () => {
  let stack: SettlementStack;

  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] });
  }, 300_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const chain = () => stack.chain(ETHEREUM_SEPOLIA);
  const contracts = () => stack.contracts(ETHEREUM_SEPOLIA);
  const balanceOf = (token: Address, owner: Address) =>
    chain().readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

  async function createSession(json: object, headers: Record<string, string> = stack.sk) {
    const path = headers === stack.sk ? '/v1/sessions' : '/v1/merchants/me/sessions';
    const created = await stack.app.request(path, {
      method: 'POST',
      headers,
      json: { amount: '25', sandboxMode: true, paymentOptionSymbols: ['USDC'], ...json },
    });
    expect([created.status, created.body.message]).toEqual([201, undefined]);
    const read = await stack.app.request(`/v1/sessions/${created.body.id}`);
    const usdc: Option = read.body.paymentOptions.find((o: Option) => o.chainId === ETHEREUM_SEPOLIA);
    return {
      id: created.body.id as string,
      read: read.body,
      usdc: { ...usdc, tokenAddress: getAddress(usdc.tokenAddress) },
    };
  }

  const predict = (sessionId: string, capMicroUsd?: bigint) =>
    predictDepositAddress({
      factory:
        capMicroUsd === undefined ? contracts().forwarderFactory! : contracts().cappedForwarderFactory!,
      implementation:
        capMicroUsd === undefined
          ? contracts().forwarderImplementation!
          : contracts().cappedForwarderImplementation!,
      sessionId,
      chainId: ETHEREUM_SEPOLIA,
      merchant: stack.merchant.account.address,
      capMicroUsd,
    });

  it('accepts hold on both credentials, shows it on the reads, and gives capped deposit addresses; settle keeps today’s', async () => {
    const held = await createSession({ overpayment: 'hold' });
    expect(held.read.overpayment).toBe('hold');
    expect(held.usdc.depositAddress).toBe(predict(held.id, 25_000_000n));
    expect(held.usdc.depositAddress).not.toBe(predict(held.id));

    const settled = await createSession({});
    expect(settled.read.overpayment).toBe('settle');
    expect(settled.usdc.depositAddress).toBe(predict(settled.id));

    const byDashboard = await createSession(
      { overpayment: 'hold', amount: '7.5', refundAddress: randomAddress() },
      stack.merchant.auth,
    );
    expect(byDashboard.usdc.depositAddress).toBe(predict(byDashboard.id, 7_500_000n));
    const summary = await stack.app.request(`/v1/merchants/me/sessions/${byDashboard.id}`, {
      headers: stack.merchant.auth,
    });
    expect(summary.body).toMatchObject({ overpayment: 'hold', refundAddress: expect.stringMatching(/^0x/) });

    const bad = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '25', sandboxMode: true, overpayment: 'keep' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/overpayment/);
  });

  it('an overpaid hold session settles its amount, keeps the surplus in the forwarder and refunds it from there on the payout address’s signature', async () => {
    const session = await createSession({ overpayment: 'hold' });
    const { usdc } = session;
    const merchantSusde = () => balanceOf(contracts().susde!, stack.merchant.account.address);
    const sharesBefore = await merchantSusde();
    await payDeposit(chain(), { token: usdc.tokenAddress, to: usdc.depositAddress, amount: 30_000_000n });
    await chain().mine({ blocks: CONFIRMATIONS + 1 });
    const completed = await pollUntil(async () => {
      const read = await stack.app.request(`/v1/sessions/${session.id}`);
      return read.body.status === 'completed' ? read.body : undefined;
    });
    expect(completed).toMatchObject({
      settledAmount: '25',
      receivedAmount: '30',
      refundedAmount: '0',
      refundableAmount: '30',
    });
    expect(await balanceOf(usdc.tokenAddress, usdc.depositAddress)).toBe(5_000_000n);
    expect(await merchantSusde()).toBeGreaterThan(sharesBefore);
    const [flush] = await stack.db
      .selectFrom('settlements')
      .select(['amount_in', 'flush_tx_hash'])
      .where('session_id', '=', session.id)
      .execute();
    expect(flush!.amount_in).toBe('25000000');
    const overpaid = await stack.db
      .selectFrom('events')
      .select('payload')
      .where('session_id', '=', session.id)
      .where('type', '=', 'session.overpaid')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(overpaid.payload as string).data).toMatchObject({
      receivedAmount: '30',
      overpaidAmount: '5',
    });

    const payer = randomAddress();
    const refund = await stack.app.request(`/v1/sessions/${session.id}/refunds`, {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '5', address: payer, reason: 'overpaid' },
    });
    expect([refund.status, refund.body.message]).toEqual([201, undefined]);
    expect(refund.body).toMatchObject({ source: 'forwarder', status: 'awaiting_authorization' });
    const signature = await signRefund(stack.merchant.account, refund.body.authorization.typedData);
    const authorized = await stack.app.request(
      `/v1/merchants/me/sessions/${session.id}/refunds/${refund.body.id}/authorize`,
      { method: 'POST', headers: stack.merchant.auth, json: { signature } },
    );
    expect(authorized.status).toBe(200);
    const ended = await refundEnded(stack, chain(), refund.body.id);
    expect(ended.status).toBe('succeeded');
    expect(await balanceOf(usdc.tokenAddress, payer)).toBe(5_000_000n);
    expect(await balanceOf(usdc.tokenAddress, usdc.depositAddress)).toBe(0n);
    const receipt = await chain().getTransactionReceipt({ hash: ended.tx_hash as Hex });
    expect(
      parseEventLogs({ abi: CappedForwarder.abi, eventName: 'Refunded', logs: receipt.logs }),
    ).toHaveLength(1);
    const read = await stack.app.request(`/v1/sessions/${session.id}`);
    expect(read.body).toMatchObject({ settledAmount: '25', refundedAmount: '5', refundableAmount: '25' });

    // What is left to refund was settled: it is the merchant's to pay back from its wallet.
    const rest = await stack.app.request(`/v1/sessions/${session.id}/refunds`, {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '1', address: payer },
    });
    expect(rest.body).toMatchObject({ source: 'merchant', status: 'awaiting_payment' });
  }, 240_000);
});
