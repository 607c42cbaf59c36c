import { randomBytes } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { sql } from 'kysely';
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSettlementActivities } from '../../activities/settlement';
import { sessionIdToBytes16 } from '../../chain/depositAddress';
import { Forwarder, ForwarderFactory } from '../../contracts/artifacts';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { payDeposit, startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { pollUntil, refundEnded, signRefund, type RefundTypedData } from './forwarderRefundSteps';

/**
 * Forwarder refunds on a local chain (issue 41; docs/operations.md "Forwarder refunds and sweeps"): a session
 * that expired with part of its amount in its forwarder is refunded from the forwarder itself, on the payout
 * address's EIP-712 authorization, relayed by the operator. A signature by another key, over another refund,
 * or replayed moves nothing (4xx, the chain's balances unchanged); two authorizations racing make one relay;
 * a worker restart after the relay was recorded (its transaction forgotten by the node) sends that same
 * transaction, never a second; a sweep of the forwarder and a live refund of its money are exclusive; a relay
 * the forwarder would refuse is not sent and the refund fails.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;

const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

interface Option {
  chainId: number;
  symbol: string;
  tokenAddress: Address;
  depositAddress: Address;
}

describe('forwarder refunds', () => {
  let stack: SettlementStack;

  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] });
  }, 300_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const chain = () => stack.chain(ETHEREUM_SEPOLIA);
  const confirm = () => chain().mine({ blocks: CONFIRMATIONS + 1 });
  const balanceOf = (token: Address, owner: Address) =>
    chain().readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

  /**
   * A 25 USD session that expired with `paidUnits` USDC in its (undeployed) forwarder: the API's clock runs
   * 52 s behind the chain's with the shortest expiry (60 s), so the chain passes its expiry in seconds.
   */
  async function expiredWithPartialDeposit(paidUnits: bigint): Promise<{ id: string; usdc: Option }> {
    const chainNowMs = Number((await chain().getBlock()).timestamp) * 1000;
    const offsetMs = chainNowMs - Date.now() - 52_000;
    const app = await stack.startApp({ now: () => new Date(Date.now() + offsetMs) });
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '25', sandboxMode: true, paymentOptionSymbols: ['USDC'], expiresInSec: 60 },
    });
    expect(created.status).toBe(201);
    const session = (await stack.app.request(`/v1/sessions/${created.body.id}`)).body;
    const usdc = session.paymentOptions.find((option: Option) => option.chainId === ETHEREUM_SEPOLIA);
    await payDeposit(chain(), { token: usdc.tokenAddress, to: usdc.depositAddress, amount: paidUnits });
    await confirm();
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(created.body.expiresAt) - chainNowMs) + 1_000),
    );
    await confirm();
    // The session's workflow has ended it (its stored status, not only the reads' view of the clock).
    await pollUntil(async () => {
      const row = await stack.db
        .selectFrom('sessions')
        .select('status')
        .where('id', '=', created.body.id)
        .executeTakeFirstOrThrow();
      const read = await stack.app.request(`/v1/sessions/${created.body.id}`);
      return row.status === 'expired' && read.body.receivedAmount !== '0' ? row : undefined;
    });
    return { id: created.body.id, usdc: { ...usdc, tokenAddress: getAddress(usdc.tokenAddress) } };
  }

  const refundRow = (refundId: string) =>
    stack.db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirstOrThrow();

  const createRefund = (sessionId: string, json: object, headers = stack.sk) =>
    stack.app.request(`/v1/sessions/${sessionId}/refunds`, { method: 'POST', headers, json });

  const authorize = (sessionId: string, refundId: string, signature: string, headers = stack.sk) =>
    stack.app.request(`/v1/sessions/${sessionId}/refunds/${refundId}/authorize`, {
      method: 'POST',
      headers,
      json: { signature },
    });

  /** The forwarder's Refunded events so far. */
  async function refundedEvents(forwarder: Address) {
    const logs = await chain().getLogs({ address: forwarder, fromBlock: 0n });
    return parseEventLogs({ abi: Forwarder.abi, eventName: 'Refunded', logs });
  }

  it('refunds a partial deposit of an expired session from its forwarder on the payout address’s signature', async () => {
    const session = await expiredWithPartialDeposit(10_000_000n);
    const payer = randomAddress();
    const created = await createRefund(session.id, { address: payer, reason: 'order never completed' });
    expect([created.status, created.body.message]).toEqual([201, undefined]);
    expect(created.body).toMatchObject({
      amount: '10',
      status: 'awaiting_authorization',
      source: 'forwarder',
      chainId: ETHEREUM_SEPOLIA,
      address: payer,
      transfer: null,
      authorization: {
        signer: stack.merchant.account.address,
        typedData: {
          domain: {
            name: 'StablePay Forwarder',
            version: '1',
            chainId: ETHEREUM_SEPOLIA,
            verifyingContract: session.usdc.depositAddress,
          },
          primaryType: 'Refund',
          message: {
            forwarder: session.usdc.depositAddress,
            token: session.usdc.tokenAddress,
            to: payer,
            amount: '10000000',
          },
        },
      },
    });
    // The JWT read shows the same authorization.
    const dashboardRead = await stack.app.request(
      `/v1/merchants/me/sessions/${session.id}/refunds/${created.body.id}`,
      { headers: stack.merchant.auth },
    );
    expect(dashboardRead.body.authorization).toEqual(created.body.authorization);
    // Nothing is deployed at the deposit address yet: the relay deploys the forwarder first.
    expect(await chain().getCode({ address: session.usdc.depositAddress })).toBeUndefined();

    const signature = await signRefund(stack.merchant.account, created.body.authorization.typedData);
    const authorized = await stack.app.request(
      `/v1/merchants/me/sessions/${session.id}/refunds/${created.body.id}/authorize`,
      { method: 'POST', headers: stack.merchant.auth, json: { signature } },
    );
    expect(authorized.status).toBe(200);
    expect(authorized.body).toMatchObject({ status: 'processing', authorization: null });

    const ended = await refundEnded(stack, chain(), created.body.id);
    expect(ended.status).toBe('succeeded');
    expect(await balanceOf(session.usdc.tokenAddress, payer)).toBe(10_000_000n);
    expect(await balanceOf(session.usdc.tokenAddress, session.usdc.depositAddress)).toBe(0n);
    const [refunded, ...others] = await refundedEvents(session.usdc.depositAddress);
    expect(others).toEqual([]);
    expect(refunded!.transactionHash).toBe(ended.tx_hash);
    expect(BigInt(ended.relay_gas_wei!)).toBeGreaterThan(0n);
    const events = await stack.db
      .selectFrom('events')
      .select(['type', 'payload'])
      .where('refund_id', '=', created.body.id)
      .execute();
    expect(events.map((event) => event.type)).toEqual(['refund.succeeded']);
    const read = await stack.app.request(`/v1/sessions/${session.id}`, { headers: stack.sk });
    expect(read.body).toMatchObject({ receivedAmount: '10', refundedAmount: '10', refundableAmount: '0' });
    // Sandbox (testnet) gas is not the merchant's money: no prepaid debit.
    const debits = await stack.db
      .selectFrom('prepaid_ledger_entries')
      .select('id')
      .where('reference', '=', `refund-gas:${created.body.id}`)
      .execute();
    expect(debits).toEqual([]);
  }, 240_000);

  it('refuses a signature by another key, over another refund, malformed, foreign or replayed, and moves nothing', async () => {
    const session = await expiredWithPartialDeposit(10_000_000n);
    const payer = randomAddress();
    const created = await createRefund(session.id, { amount: '4', address: payer });
    expect(created.status).toBe(201);
    const refundId: string = created.body.id;
    const typedData: RefundTypedData = created.body.authorization.typedData;
    const unchanged = async () => {
      expect((await refundRow(refundId)).status).toBe('awaiting_authorization');
      expect(await balanceOf(session.usdc.tokenAddress, session.usdc.depositAddress)).toBe(10_000_000n);
      expect(await balanceOf(session.usdc.tokenAddress, payer)).toBe(0n);
    };

    const byAnother = await authorize(
      session.id,
      refundId,
      await signRefund(privateKeyToAccount(generatePrivateKey()), typedData),
    );
    expect(byAnother.status).toBe(400);
    expect(byAnother.body.message).toMatch(/signature/);
    expect(byAnother.body.message).toMatch(/not by the payout address/);
    const moreThanSigned = await authorize(
      session.id,
      refundId,
      await signRefund(stack.merchant.account, typedData, { amount: '10000000' }),
    );
    expect(moreThanSigned.status).toBe(400);
    const elsewhere = await authorize(
      session.id,
      refundId,
      await signRefund(stack.merchant.account, typedData, { to: randomAddress() }),
    );
    expect(elsewhere.status).toBe(400);
    const malformed = await authorize(session.id, refundId, '0x1234');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/signature/);
    const notHex = await authorize(session.id, refundId, 'signed');
    expect(notHex.status).toBe(400);
    await unchanged();

    const signature = await signRefund(stack.merchant.account, typedData);
    const other = await signInNewMerchant(stack.app);
    const otherSk = { authorization: `Bearer ${await createApiKey(stack.app, other)}` };
    const foreign = await authorize(session.id, refundId, signature, otherSk);
    expect(foreign.status).toBe(404);
    await unchanged();

    const accepted = await authorize(session.id, refundId, signature);
    expect(accepted.status).toBe(200);
    const replayed = await authorize(session.id, refundId, signature);
    expect(replayed.status).toBe(409);
    expect((await refundEnded(stack, chain(), refundId)).status).toBe('succeeded');
    expect(await balanceOf(session.usdc.tokenAddress, payer)).toBe(4_000_000n);
    expect(await balanceOf(session.usdc.tokenAddress, session.usdc.depositAddress)).toBe(6_000_000n);

    // The same signature relayed again by anyone: the forwarder refuses it (RefundIdUsed), nothing moves.
    await expect(
      chain().simulateContract({
        address: session.usdc.depositAddress,
        abi: Forwarder.abi,
        functionName: 'refund',
        args: [session.usdc.tokenAddress, payer, 4_000_000n, typedData.message.refundId, signature],
      }),
    ).rejects.toThrow(/RefundIdUsed/);
    const afterReplay = await authorize(session.id, refundId, signature);
    expect(afterReplay.status).toBe(409);
    expect(await balanceOf(session.usdc.tokenAddress, session.usdc.depositAddress)).toBe(6_000_000n);
    expect(await refundedEvents(session.usdc.depositAddress)).toHaveLength(1);
  }, 240_000);

  it('two authorizations racing make one relay', async () => {
    const session = await expiredWithPartialDeposit(5_000_000n);
    const payer = randomAddress();
    const created = await createRefund(session.id, { address: payer });
    const signature = await signRefund(stack.merchant.account, created.body.authorization.typedData);
    const answers = await Promise.all([
      authorize(session.id, created.body.id, signature),
      stack.app.request(`/v1/merchants/me/sessions/${session.id}/refunds/${created.body.id}/authorize`, {
        method: 'POST',
        headers: stack.merchant.auth,
        json: { signature },
      }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect((await refundEnded(stack, chain(), created.body.id)).status).toBe('succeeded');
    expect(await balanceOf(session.usdc.tokenAddress, payer)).toBe(5_000_000n);
    expect(await refundedEvents(session.usdc.depositAddress)).toHaveLength(1);
  }, 240_000);

  it('a worker restart after the relay was recorded sends that same transaction again, never a second', async () => {
    const session = await expiredWithPartialDeposit(3_000_000n);
    // Deployed beforehand (anyone may), so the only operator transaction of this refund is its relay.
    await chain().writeContract({
      address: stack.contracts(ETHEREUM_SEPOLIA).forwarderFactory!,
      abi: ForwarderFactory.abi,
      functionName: 'deploy',
      args: [sessionIdToBytes16(session.id), stack.merchant.account.address],
    });
    const payer = randomAddress();
    const created = await createRefund(session.id, { address: payer });
    const signature = await signRefund(stack.merchant.account, created.body.authorization.typedData);
    const operator = stack.operator.address;
    const nonceBefore = await chain().getTransactionCount({ address: operator });

    let workersRunning = true;
    const stopWorkers = async () => {
      await stack.stopWorkers();
      workersRunning = false;
    };
    const startWorkers = async () => {
      await stack.startWorkers();
      workersRunning = true;
    };
    await stopWorkers();
    expect((await authorize(session.id, created.body.id, signature)).status).toBe(200);
    // The relay is signed, recorded and broadcast, but not mined; then the worker goes away and the node
    // forgets the transaction.
    await chain().setAutomine(false);
    try {
      await startWorkers();
      const recorded = await pollUntil(async () => {
        const row = await refundRow(created.body.id);
        return row.tx_hash ? row : undefined;
      });
      await pollUntil(async () =>
        (await chain()
          .getTransaction({ hash: recorded.tx_hash as Hex })
          .catch(() => undefined))
          ? true
          : undefined,
      );
      await stopWorkers();
      await chain().dropTransaction({ hash: recorded.tx_hash as Hex });
      expect(
        await chain()
          .getTransaction({ hash: recorded.tx_hash as Hex })
          .catch(() => null),
      ).toBeNull();
      await chain().setAutomine(true);
      await startWorkers();
      const ended = await refundEnded(stack, chain(), created.body.id);
      expect(ended).toMatchObject({ status: 'succeeded', tx_hash: recorded.tx_hash });
    } finally {
      await chain().setAutomine(true);
      if (!workersRunning) await startWorkers();
    }
    expect(await chain().getTransactionCount({ address: operator })).toBe(nonceBefore + 1);
    expect(await balanceOf(session.usdc.tokenAddress, payer)).toBe(3_000_000n);
    expect(await refundedEvents(session.usdc.depositAddress)).toHaveLength(1);
  }, 240_000);

  it('a sweep and a live refund of the forwarder’s money are exclusive', async () => {
    const session = await expiredWithPartialDeposit(8_000_000n);
    const payer = randomAddress();
    const created = await createRefund(session.id, { amount: '8', address: payer });
    expect(created.body.source).toBe('forwarder');
    // Deployed, as a sweep would find it (anyone may deploy a forwarder).
    await chain().writeContract({
      address: stack.contracts(ETHEREUM_SEPOLIA).forwarderFactory!,
      abi: ForwarderFactory.abi,
      functionName: 'deploy',
      args: [sessionIdToBytes16(session.id), stack.merchant.account.address],
    });

    // While the refund is live, retry-forwarder refuses to sweep, and so does the flush step itself.
    const retry = await stack.app.request(`/v1/merchants/me/sessions/${session.id}/retry-forwarder`, {
      method: 'POST',
      headers: stack.merchant.auth,
    });
    expect(retry.status).toBe(409);
    const activities = createSettlementActivities({
      db: stack.db,
      operator: stack.operator,
      slippageBps: 50,
    });
    await expect(
      new MockActivityEnvironment().run(activities.flushForwarder, {
        sessionId: session.id,
        chainId: ETHEREUM_SEPOLIA,
        token: session.usdc.tokenAddress,
        forwarder: session.usdc.depositAddress,
        tokenDecimals: 6,
      }),
    ).rejects.toThrow(/for refunds of the session/);
    expect(await balanceOf(session.usdc.tokenAddress, session.usdc.depositAddress)).toBe(8_000_000n);

    // A flush in flight (recorded, not stored as mined): no authorization is taken, nothing moves.
    const signature = await signRefund(stack.merchant.account, created.body.authorization.typedData);
    const flush = await stack.db
      .insertInto('settlements')
      .values({
        session_id: session.id,
        chain_id: ETHEREUM_SEPOLIA,
        token_address: session.usdc.tokenAddress.toLowerCase(),
        forwarder_address: session.usdc.depositAddress,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const duringFlush = await authorize(session.id, created.body.id, signature);
    expect(duringFlush.status).toBe(409);
    expect(duringFlush.body.message).toMatch(/sweep of this forwarder is in flight/);
    expect((await refundRow(created.body.id)).status).toBe('awaiting_authorization');
    await stack.db.deleteFrom('settlements').where('id', '=', flush.id).execute();

    // Money the forwarder no longer holds is never promised: the balance less unrelayed refunds must cover it.
    await sql`update refunds set amount_units = '8000001' where id = ${created.body.id}`.execute(stack.db);
    const resigned = await stack.app.request(`/v1/sessions/${session.id}/refunds/${created.body.id}`, {
      headers: stack.sk,
    });
    const tooMuch = await authorize(
      session.id,
      created.body.id,
      await signRefund(stack.merchant.account, resigned.body.authorization.typedData),
    );
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.message).toMatch(/not enough for this refund/);
    await sql`update refunds set amount_units = '8000000' where id = ${created.body.id}`.execute(stack.db);

    expect((await authorize(session.id, created.body.id, signature)).status).toBe(200);
    expect((await refundEnded(stack, chain(), created.body.id)).status).toBe('succeeded');
    expect(await balanceOf(session.usdc.tokenAddress, payer)).toBe(8_000_000n);
  }, 240_000);

  it('a relay the forwarder refuses (its money gone meanwhile) sends nothing and fails with refund.failed', async () => {
    const session = await expiredWithPartialDeposit(6_000_000n);
    await chain().writeContract({
      address: stack.contracts(ETHEREUM_SEPOLIA).forwarderFactory!,
      abi: ForwarderFactory.abi,
      functionName: 'deploy',
      args: [sessionIdToBytes16(session.id), stack.merchant.account.address],
    });
    const payer = randomAddress();
    const created = await createRefund(session.id, { address: payer });
    const typedData: RefundTypedData = created.body.authorization.typedData;
    const signature = await signRefund(stack.merchant.account, typedData);
    const operator = stack.operator.address;
    const nonceBefore = await chain().getTransactionCount({ address: operator });

    await stack.stopWorkers();
    try {
      expect((await authorize(session.id, created.body.id, signature)).status).toBe(200);
      // Before the worker relays it, the payout key signs another refund of the whole balance outside the
      // service, and anyone relays that one: the money this refund was promised is gone.
      const elsewhere = randomAddress();
      const otherId = `0x${randomBytes(16).toString('hex')}${'0'.repeat(32)}` as Hex;
      const otherSignature = await signRefund(stack.merchant.account, typedData, {
        to: elsewhere,
        refundId: otherId,
      });
      const receipt = await chain().waitForTransactionReceipt({
        hash: await chain().writeContract({
          address: session.usdc.depositAddress,
          abi: Forwarder.abi,
          functionName: 'refund',
          args: [session.usdc.tokenAddress, elsewhere, 6_000_000n, otherId, otherSignature],
        }),
      });
      expect(receipt.status).toBe('success');
    } finally {
      await stack.startWorkers();
    }
    const ended = await refundEnded(stack, chain(), created.body.id);
    expect(ended.status).toBe('failed');
    expect(ended.failure_reason).toMatch(/RefundExceedsBalance/);
    expect(ended.tx_hash).toBeNull();
    expect(await chain().getTransactionCount({ address: operator })).toBe(nonceBefore);
    expect(await balanceOf(session.usdc.tokenAddress, payer)).toBe(0n);
    const events = await stack.db
      .selectFrom('events')
      .select('type')
      .where('refund_id', '=', created.body.id)
      .execute();
    expect(events.map((event) => event.type)).toEqual(['refund.failed']);
  }, 240_000);
});
