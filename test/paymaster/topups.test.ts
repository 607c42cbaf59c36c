import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../../db/client';
import { expireSession, transitionSession } from '../../db/sessions';
import { creditTopupForSettlement, topupSettlementReference } from '../../db/topups';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { payDeposit, startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { serialiseSessionLifecycleEvent } from '../../webhooks/sessionLifecycleEvents';

/**
 * Self-serve top-ups: POST creates a live payment session that settles to the platform treasury; each
 * settlement the treasury receives (real workflow, deposit monitor and settlement on a local mainnet
 * stand-in) credits the prepaid ledger with what arrived, exactly once. Live mode runs locally end to end
 * on the same stand-in (docs/decisions.md "Foundation"): a merchant's live session is paid there and completes.
 */
const ETHEREUM = 1;
const CONFIRMATIONS = 12;
const TOPUPS = '/v1/merchants/me/balance/topups';
const TREASURY = privateKeyToAccount(generatePrivateKey()).address;

describe('prepaid gas top-ups', () => {
  let stack: SettlementStack;
  beforeAll(async () => {
    stack = await startSettlementStack({
      chainIds: [ETHEREUM],
      env: { PLATFORM_TREASURY_ADDRESS: TREASURY },
    });
  }, 120_000);
  afterAll(() => stack?.stop());

  const createTopup = (merchant: SignedInMerchant, json: unknown) =>
    stack.app.request(TOPUPS, { method: 'POST', headers: merchant.auth, json });
  const listTopups = async (merchant: SignedInMerchant) => {
    const listed = await stack.app.request(TOPUPS, { headers: merchant.auth });
    expect(listed.status).toBe(200);
    return listed.body.data as Array<{ id: string; sessionId: string; amount: string; status: string }>;
  };
  const balanceOf = async (merchant: SignedInMerchant) =>
    (await stack.app.request('/v1/merchants/me/balance', { headers: merchant.auth })).body
      .prepaidBalanceUsd as string;
  const sessionsOf = (merchantId: string) =>
    stack.db.selectFrom('sessions').select('id').where('merchant_id', '=', merchantId).execute();
  const ledgerOf = (merchantId: string) =>
    stack.db.selectFrom('prepaid_ledger_entries').selectAll().where('merchant_id', '=', merchantId).execute();

  async function waitForStatus(sessionId: string, wanted: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = (await stack.app.request(`/v1/sessions/${sessionId}/status`)).body.status;
      if (last === wanted) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`session ${sessionId} is ${last}, not ${wanted} after ${timeoutMs} ms`);
  }

  it('creates a pending top-up backed by a payable live payment session that settles to the treasury', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const created = await createTopup(merchant, { amount: '25.5', sandboxMode: false });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      paymentUrl: `${stack.app.config.PUBLIC_BASE_URL}/pay/${created.body.sessionId}`,
      amount: '25.500000',
      creditedAmount: '0.000000',
      status: 'pending',
      createdAt: expect.any(String),
    });
    const session = await stack.app.request(`/v1/sessions/${created.body.sessionId}`);
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ amount: '25.5', merchantName: 'Prepaid gas top-up' });
    expect(session.body.paymentOptions.length).toBeGreaterThan(0);
    const row = await stack.db
      .selectFrom('sessions')
      .select(['merchant_id', 'sandbox_mode'])
      .where('id', '=', created.body.sessionId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ merchant_id: merchant.merchantId, sandbox_mode: false });
    const payouts = await stack.db
      .selectFrom('payment_options')
      .select('payout_address')
      .where('session_id', '=', created.body.sessionId)
      .execute();
    expect(new Set(payouts.map((option) => option.payout_address))).toEqual(new Set([TREASURY]));
    expect(await listTopups(merchant)).toEqual([created.body]);
    expect(await ledgerOf(merchant.merchantId)).toEqual([]);
  });

  it('a live merchant session is offered and paid on the Ethereum mainnet stand-in and completes with sUSDe for the merchant', async () => {
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '40', sandboxMode: false, paymentOptionSymbols: ['USDT'] },
    });
    expect(created.status).toBe(201);
    const session = (await stack.app.request(`/v1/sessions/${created.body.id}`)).body as {
      paymentOptions: Array<{
        chainId: number;
        network: string;
        tokenAddress: Address;
        depositAddress: Address;
        amount: string;
      }>;
    };
    expect(session.paymentOptions.map(({ chainId, network }) => ({ chainId, network }))).toEqual([
      { chainId: ETHEREUM, network: 'ethereum' },
    ]);
    const [option] = session.paymentOptions;
    const payout = (await stack.app.request('/v1/merchants/me', { headers: stack.merchant.auth })).body
      .payoutAddress as Address;
    const susdeOfMerchant = () =>
      stack.chain(ETHEREUM).readContract({
        address: stack.contracts(ETHEREUM).susde!,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [payout],
      });
    const before = await susdeOfMerchant();
    await payDeposit(stack.chain(ETHEREUM), {
      token: option!.tokenAddress,
      to: option!.depositAddress,
      amount: BigInt(option!.amount),
    });
    await stack.chain(ETHEREUM).mine({ blocks: CONFIRMATIONS + 1 });
    await waitForStatus(created.body.id, 'completed', 120_000);
    const [settlement] = await stack.db
      .selectFrom('settlements')
      .select(['chain_id', 'shares', 'amount_in'])
      .where('session_id', '=', created.body.id)
      .execute();
    expect(settlement).toMatchObject({ chain_id: ETHEREUM, amount_in: option!.amount });
    // Staked on the stand-in itself (Ethereum needs no bridge): the merchant holds exactly the shares recorded.
    expect(BigInt(settlement!.shares!)).toBeGreaterThan(0n);
    expect((await susdeOfMerchant()) - before).toBe(BigInt(settlement!.shares!));
  }, 180_000);

  it('writes the session and its top-up together: when the top-up row fails, no session is left behind', async () => {
    const merchant = await signInNewMerchant(stack.app);
    // A trigger that refuses this merchant's top-up rows stands in for a failure between the two writes.
    const trigger = `refuse_topups_${merchant.merchantId.replace(/-/g, '')}`;
    await sql
      .raw(
        `CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
         CREATE TRIGGER ${trigger} BEFORE INSERT ON topups FOR EACH ROW
         WHEN (NEW.merchant_id = '${merchant.merchantId}') EXECUTE FUNCTION ${trigger}();`,
      )
      .execute(stack.db);
    try {
      const failed = await createTopup(merchant, { amount: '12' });
      expect(failed.status).toBe(500);
    } finally {
      await sql.raw(`DROP TRIGGER ${trigger} ON topups; DROP FUNCTION ${trigger}();`).execute(stack.db);
    }
    expect(await sessionsOf(merchant.merchantId)).toEqual([]);
    expect(await listTopups(merchant)).toEqual([]);
    // With the failure gone, the same request succeeds.
    expect((await createTopup(merchant, { amount: '12' })).status).toBe(201);
  });

  /** Credits `topupSessionId` with one settlement's delivery, as the settlement recording does. */
  const creditSettlement = (db: Db, sessionId: string, settlementId: string, micro: bigint) =>
    db
      .transaction()
      .execute((trx) => creditTopupForSettlement(trx, { sessionId, settlementId, deliveredMicroUsd: micro }));

  it('credits the ledger exactly once with what the treasury received when the top-up session is paid; a replayed credit changes nothing', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const created = await createTopup(merchant, { amount: '12.345678' });
    expect(created.status).toBe(201);
    const session = (await stack.app.request(`/v1/sessions/${created.body.sessionId}`)).body as {
      paymentOptions: Array<{
        chainId: number;
        symbol: string;
        tokenAddress: Address;
        depositAddress: Address;
        amount: string;
      }>;
    };
    const option = session.paymentOptions.find(
      (candidate) => candidate.chainId === ETHEREUM && candidate.symbol === 'USDC',
    )!;
    await payDeposit(stack.chain(ETHEREUM), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: BigInt(option.amount),
    });
    await stack.chain(ETHEREUM).mine({ blocks: CONFIRMATIONS + 1 });
    await waitForStatus(created.body.sessionId, 'completed');

    const [settlement] = await stack.db
      .selectFrom('settlements')
      .selectAll()
      .where('session_id', '=', created.body.sessionId)
      .execute();
    const ledger = await ledgerOf(merchant.merchantId);
    expect(ledger).toEqual([
      expect.objectContaining({
        direction: 'credit',
        amount_usd: '12.345678',
        reference: topupSettlementReference(created.body.id, settlement!.id),
      }),
    ]);
    expect(await balanceOf(merchant)).toBe('12.345678');
    expect((await listTopups(merchant))[0]).toMatchObject({
      id: created.body.id,
      status: 'credited',
      creditedAmount: '12.345678',
    });

    // A replayed credit of the same settlement finds it written and changes nothing.
    expect(await creditSettlement(stack.db, created.body.sessionId, settlement!.id, 12_345_678n)).toBe(0n);
    expect(await ledgerOf(merchant.merchantId)).toHaveLength(1);
    expect(await balanceOf(merchant)).toBe('12.345678');
  }, 120_000);

  it('concurrent and repeated credits of the same settlement credit once', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const created = await createTopup(merchant, { amount: '3' });
    const sessionId = created.body.sessionId as string;
    const settlementId = randomUUID();
    const results = await Promise.all([
      creditSettlement(stack.db, sessionId, settlementId, 3_000_000n),
      creditSettlement(stack.db, sessionId, settlementId, 3_000_000n),
      creditSettlement(stack.db, sessionId, settlementId, 3_000_000n),
    ]);
    expect(results.filter((credited) => credited > 0n)).toHaveLength(1);
    expect(await creditSettlement(stack.db, sessionId, settlementId, 3_000_000n)).toBe(0n);
    expect(await ledgerOf(merchant.merchantId)).toEqual([
      expect.objectContaining({
        amount_usd: '3.000000',
        reference: topupSettlementReference(created.body.id, settlementId),
      }),
    ]);
    expect(await balanceOf(merchant)).toBe('3.000000');
  });

  it('an expired or failed session leaves its top-up expired or failed, never credited', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const expiring = await createTopup(merchant, { amount: '1' });
    const failing = await createTopup(merchant, { amount: '2' });
    expect(await expireSession(stack.db, expiring.body.sessionId, serialiseSessionLifecycleEvent)).toBe(true);
    const failingId = failing.body.sessionId as string;
    expect(
      await transitionSession(stack.db, { id: failingId, from: ['awaiting_payment'], to: 'confirming' }),
    ).toBe(true);
    expect(
      await transitionSession(stack.db, {
        id: failingId,
        from: ['confirming'],
        to: 'failed',
        failureReason: 'revert',
      }),
    ).toBe(true);
    expect((await listTopups(merchant)).map(({ id, status }) => ({ id, status }))).toEqual([
      { id: failing.body.id, status: 'failed' },
      { id: expiring.body.id, status: 'expired' },
    ]);
    expect(await ledgerOf(merchant.merchantId)).toEqual([]);
  });

  it.each([
    [{}, 'Validation failed: amount'],
    [{ amount: '0' }, 'Validation failed: amount: must be greater than 0'],
    [{ amount: '-5' }, 'Validation failed: amount'],
    [{ amount: '1.1234567' }, 'Validation failed: amount'],
    [{ amount: 10 }, 'Validation failed: amount'],
    [{ amount: '1000000000.000001' }, 'Validation failed: amount: must be at most 1000000000'],
    [{ amount: '10', sandboxMode: 'yes' }, 'Validation failed: sandboxMode'],
    [{ amount: '10', sandboxMode: true }, 'Validation failed: sandboxMode: top-ups are live only'],
    [{ amount: '10', merchantName: 'x' }, 'Validation failed'],
  ])('answers 400 for %j and writes nothing', async (json, message) => {
    const merchant = await signInNewMerchant(stack.app);
    const created = await createTopup(merchant, json);
    expect(created.status).toBe(400);
    expect(created.body.message).toContain(message);
    expect(await listTopups(merchant)).toEqual([]);
    expect(await sessionsOf(merchant.merchantId)).toEqual([]);
  });

  it('requires a dashboard JWT', async () => {
    expect((await stack.app.request(TOPUPS)).status).toBe(401);
    expect((await stack.app.request(TOPUPS, { method: 'POST', json: { amount: '1' } })).status).toBe(401);
    expect((await stack.app.request(TOPUPS, { headers: stack.sk })).status).toBe(401);
  });

  it('lists only the merchant’s own top-ups, newest first', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const other = await signInNewMerchant(stack.app);
    const ids: string[] = [];
    for (const amount of ['1', '2', '3']) {
      const created = await createTopup(merchant, { amount });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    const foreign = await createTopup(other, { amount: '9' });
    const listed = await listTopups(merchant);
    expect(listed.map((topup) => topup.id)).toEqual([...ids].reverse());
    expect(listed.map((topup) => topup.amount)).toEqual(['3.000000', '2.000000', '1.000000']);
    expect((await listTopups(other)).map((topup) => topup.id)).toEqual([foreign.body.id]);

    // A settlement of the other merchant's top-up credits the other merchant only.
    await creditSettlement(stack.db, foreign.body.sessionId, randomUUID(), 9_000_000n);
    expect(await balanceOf(other)).toBe('9.000000');
    expect(await balanceOf(merchant)).toBe('0.000000');
  });
});
