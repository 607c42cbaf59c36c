import { sql } from 'kysely';
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { sessionIdToBytes16 } from '../../chain/depositAddress';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createSettlementActivities } from '../../activities/settlement';
import { Forwarder, ForwarderFactory } from '../../contracts/artifacts';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { payDeposit, startSettlementStack, type SettlementStack } from './settlementStack';

/**
 * Money safety I: top-ups, underpaid sessions and settlement retries never create or move money wrongly.
 * Each test is named after the review finding it holds (issue 12); all run on real chains, the real
 * worker and deposit monitors, Temporal and Postgres.
 */
const ETHEREUM = 1;
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS: Record<number, number> = { [ETHEREUM]: 12, [ETHEREUM_SEPOLIA]: 3 };
const TREASURY = privateKeyToAccount(generatePrivateKey()).address;
const TOPUPS = '/v1/merchants/me/balance/topups';

interface PaymentOption {
  chainId: number;
  symbol: string;
  tokenAddress: Address;
  depositAddress: Address;
  amount: string;
  decimals: number;
}

describe('money safety: top-ups, underpaid sessions and settlement retries', () => {
  let stack: SettlementStack;
  beforeAll(async () => {
    stack = await startSettlementStack({
      chainIds: [ETHEREUM_SEPOLIA, ETHEREUM],
      env: { [`PLATFORM_TREASURY_ADDRESS_${ETHEREUM}`]: TREASURY },
    });
  }, 180_000);
  afterAll(() => stack?.stop());

  const optionsOf = async (sessionId: string) =>
    (await stack.app.request(`/v1/sessions/${sessionId}`)).body.paymentOptions as PaymentOption[];
  const optionOn = async (sessionId: string, chainId: number, symbol = 'USDC') =>
    (await optionsOf(sessionId)).find((option) => option.chainId === chainId && option.symbol === symbol)!;
  const pay = (option: PaymentOption, amount = BigInt(option.amount)) =>
    payDeposit(stack.chain(option.chainId), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount,
    });
  const confirm = (chainId: number) => stack.chain(chainId).mine({ blocks: CONFIRMATIONS[chainId]! + 1 });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 60_000) {
    const deadline = Date.now() + ms;
    let last = await read();
    while (!done(last)) {
      if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)} after ${ms} ms`);
      await sleep(200);
      last = await read();
    }
    return last;
  }
  const statusOf = async (sessionId: string) =>
    (await stack.app.request(`/v1/sessions/${sessionId}/status`)).body.status as string;
  const waitForStatus = (sessionId: string, wanted: string, ms?: number) =>
    waitFor(
      () => statusOf(sessionId),
      (status) => status === wanted,
      `session ${sessionId}`,
      ms,
    );
  const depositsOf = (sessionId: string) =>
    stack.db.selectFrom('deposits').selectAll().where('session_id', '=', sessionId).execute();
  const settlementsOf = (sessionId: string) =>
    stack.db
      .selectFrom('settlements')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('usde_amount', 'is not', null)
      .orderBy('created_at')
      .execute();
  const eventsOf = (sessionId: string) =>
    stack.db.selectFrom('events').selectAll().where('session_id', '=', sessionId).execute();
  const ledgerOf = (merchantId: string) =>
    stack.db
      .selectFrom('prepaid_ledger_entries')
      .select(['direction', 'amount_usd', 'reference'])
      .where('merchant_id', '=', merchantId)
      .execute();
  const susdeOf = (chainId: number, owner: Address) =>
    stack.chain(chainId).readContract({
      address: stack.contracts(chainId).susde!,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
    });
  const summaryOf = async (merchant: SignedInMerchant, sessionId: string) =>
    (await stack.app.request(`/v1/merchants/me/sessions/${sessionId}`, { headers: merchant.auth })).body;
  const retry = (merchant: SignedInMerchant, sessionId: string) =>
    stack.app.request(`/v1/merchants/me/sessions/${sessionId}/retry-forwarder`, {
      method: 'POST',
      headers: merchant.auth,
    });
  const workflowResult = (sessionId: string) =>
    stack.temporal.workflow.getHandle(`session-${sessionId}`).result() as Promise<{ status: string }>;

  async function createSandboxSession(merchant: SignedInMerchant, amount: string): Promise<string> {
    const sk = await stack.app.request('/v1/merchants/me/api-keys', {
      method: 'POST',
      headers: merchant.auth,
      json: {},
    });
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${sk.body.rawKey}` },
      json: { amount, sandboxMode: true },
    });
    expect(created.status).toBe(201);
    return created.body.id;
  }

  /** The session's workflow ended the way its timer would have, and expiresAt lies in the past. */
  async function expireNow(sessionId: string) {
    await stack.temporal.workflow.getHandle(`session-${sessionId}`).terminate('test: expiry');
    await sql`UPDATE sessions SET status = 'expired', expires_at = now() - interval '1 minute' WHERE id = ${sessionId}`.execute(
      stack.db,
    );
  }

  /** USD with 6 decimals, from 18-decimal USDe base units, rounded down (never credit more than received). */
  const usdeAsUsd = (usde: bigint) => {
    const micro = usde / 10n ** 12n;
    return `${micro / 1_000_000n}.${(micro % 1_000_000n).toString().padStart(6, '0')}`;
  };

  it('finding 1 — a top-up settles to the platform treasury: the treasury receives the stablecoins, the merchant nothing, and the ledger is credited exactly what the treasury received', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const payout = getAddress(merchant.account.address);
    const created = await stack.app.request(TOPUPS, {
      method: 'POST',
      headers: merchant.auth,
      json: { amount: '25.5' },
    });
    expect(created.status).toBe(201);
    const option = await optionOn(created.body.sessionId, ETHEREUM);
    // The deposit address is the forwarder bound to the treasury, not to the merchant's payout address.
    const forwarderOfTreasury = await stack.chain(ETHEREUM).readContract({
      address: stack.contracts(ETHEREUM).forwarderFactory!,
      abi: ForwarderFactory.abi,
      functionName: 'predict',
      args: [sessionIdToBytes16(created.body.sessionId), TREASURY],
    });
    expect(option.depositAddress).toBe(forwarderOfTreasury);
    const treasuryBefore = await susdeOf(ETHEREUM, TREASURY);
    const merchantBefore = await susdeOf(ETHEREUM, payout);

    await pay(option);
    await confirm(ETHEREUM);
    await waitForStatus(created.body.sessionId, 'completed', 90_000);

    const [settlement] = await settlementsOf(created.body.sessionId);
    const receipt = await stack
      .chain(ETHEREUM)
      .getTransactionReceipt({ hash: settlement!.flush_tx_hash as Hex });
    const [flushed] = parseEventLogs({ abi: Forwarder.abi, eventName: 'Flushed', logs: receipt.logs });
    expect(flushed!.args.amountIn).toBe(BigInt(option.amount));
    expect((await susdeOf(ETHEREUM, TREASURY)) - treasuryBefore).toBe(flushed!.args.sharesOrNonce);
    expect((await susdeOf(ETHEREUM, payout)) - merchantBefore).toBe(0n);
    const credited = usdeAsUsd(flushed!.args.usdeAmount);
    expect(await ledgerOf(merchant.merchantId)).toEqual([
      { direction: 'credit', amount_usd: credited, reference: expect.stringContaining(created.body.id) },
    ]);
    const balance = await stack.app.request('/v1/merchants/me/balance', { headers: merchant.auth });
    expect(balance.body.prepaidBalanceUsd).toBe(credited);
    const [topup] = (await stack.app.request(TOPUPS, { headers: merchant.auth })).body.data;
    expect(topup).toMatchObject({ id: created.body.id, status: 'credited', creditedAmount: credited });
  }, 150_000);

  it('finding 2 — sandbox top-ups are refused: testnet tokens never buy mainnet sponsorship', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const refused = await stack.app.request(TOPUPS, {
      method: 'POST',
      headers: merchant.auth,
      json: { amount: '5', sandboxMode: true },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/sandboxMode/);
    expect((await stack.app.request(TOPUPS, { headers: merchant.auth })).body.data).toEqual([]);
    const sessions = await stack.db
      .selectFrom('sessions')
      .select('id')
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    expect(sessions).toEqual([]);
  });

  it('finding 3 — retry-forwarder on an underpaid, expired top-up settles what arrived and credits only that, never the amount due', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const created = await stack.app.request(TOPUPS, {
      method: 'POST',
      headers: merchant.auth,
      json: { amount: '1000000' },
    });
    const sessionId = created.body.sessionId as string;
    const option = await optionOn(sessionId, ETHEREUM);
    await pay(option, 10_000n); // 0.01 USDC of $1M
    await confirm(ETHEREUM);
    await waitFor(
      () => depositsOf(sessionId),
      (rows) => rows.length === 1,
      'deposit',
    );
    expect(await statusOf(sessionId)).toBe('awaiting_payment');
    await expireNow(sessionId);

    const accepted = await retry(merchant, sessionId);
    expect(accepted.status).toBe(202);
    await workflowResult(sessionId);
    await waitFor(
      () => settlementsOf(sessionId),
      (rows) => rows.length === 1,
      'settlement',
    );

    expect(await statusOf(sessionId)).toBe('expired');
    expect(await summaryOf(merchant, sessionId)).toMatchObject({ status: 'expired', settledAmount: '0.01' });
    const [settlement] = await settlementsOf(sessionId);
    expect(await ledgerOf(merchant.merchantId)).toEqual([
      {
        direction: 'credit',
        amount_usd: usdeAsUsd(BigInt(settlement!.usde_amount!)),
        reference: expect.any(String),
      },
    ]);
    expect(usdeAsUsd(BigInt(settlement!.usde_amount!))).toBe('0.010000');
    const [topup] = (await stack.app.request(TOPUPS, { headers: merchant.auth })).body.data;
    expect(topup).toMatchObject({ status: 'expired', creditedAmount: '0.010000' });
    // No session.confirming event: nothing tells the merchant a $1M payment arrived.
    expect(await eventsOf(sessionId)).toEqual([]);
  }, 150_000);

  it('finding 3 — an underpaid ordinary session, expired and retried, pays the merchant what arrived but is never completed and emits no webhook event', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const payout = getAddress(merchant.account.address);
    const sk = await stack.app.request('/v1/merchants/me/api-keys', {
      method: 'POST',
      headers: merchant.auth,
      json: {},
    });
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${sk.body.rawKey}` },
      json: { amount: '20', sandboxMode: true },
    });
    const sessionId = created.body.id as string;
    const option = await optionOn(sessionId, ETHEREUM_SEPOLIA);
    const before = await susdeOf(ETHEREUM_SEPOLIA, payout);
    await pay(option, 5_000_000n);
    await confirm(ETHEREUM_SEPOLIA);
    await waitFor(
      () => depositsOf(sessionId),
      (rows) => rows.length === 1,
      'deposit',
    );
    await expireNow(sessionId);

    expect((await retry(merchant, sessionId)).status).toBe(202);
    await workflowResult(sessionId);
    const [settlement] = await waitFor(
      () => settlementsOf(sessionId),
      (rows) => rows.length === 1,
      'settlement',
    );
    expect(settlement!.amount_in).toBe('5000000');
    expect((await susdeOf(ETHEREUM_SEPOLIA, payout)) - before).toBe(BigInt(settlement!.shares!));
    expect(await summaryOf(merchant, sessionId)).toMatchObject({
      status: 'expired',
      settledAmount: '5',
      amount: '20',
    });
    expect(await eventsOf(sessionId)).toEqual([]);
    // Nothing is left unsettled, so a second retry has nothing to do.
    expect((await retry(merchant, sessionId)).status).toBe(409);
  }, 150_000);

  it('finding 4 — a flush whose recording fails right around its broadcast is never sent twice, and the paid session completes', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const payout = getAddress(merchant.account.address);
    const sk = await stack.app.request('/v1/merchants/me/api-keys', {
      method: 'POST',
      headers: merchant.auth,
      json: {},
    });
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${sk.body.rawKey}` },
      json: { amount: '6', sandboxMode: true },
    });
    const sessionId = created.body.id as string;
    // The first write that records this session's flush transaction fails once, as a crash would.
    const name = `crash_once_${sessionId.replace(/-/g, '')}`;
    await sql
      .raw(
        `CREATE SEQUENCE ${name};
         CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
           IF NEW.session_id = '${sessionId}' AND NEW.flush_tx_hash IS NOT NULL
              AND (TG_OP = 'INSERT' OR OLD.flush_tx_hash IS NULL) AND nextval('${name}') = 1 THEN
             RAISE EXCEPTION 'simulated crash while recording the flush';
           END IF;
           RETURN NEW;
         END $$;
         CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON settlements FOR EACH ROW EXECUTE FUNCTION ${name}();`,
      )
      .execute(stack.db);
    try {
      const option = await optionOn(sessionId, ETHEREUM_SEPOLIA);
      const before = await susdeOf(ETHEREUM_SEPOLIA, payout);
      await pay(option);
      await confirm(ETHEREUM_SEPOLIA);
      await waitFor(
        () => statusOf(sessionId),
        (status) => status === 'completed' || status === 'failed',
        'settlement outcome',
        90_000,
      );
      expect(await summaryOf(merchant, sessionId)).toMatchObject({
        status: 'completed',
        failureReason: null,
      });
      const settlements = await settlementsOf(sessionId);
      expect(settlements).toHaveLength(1);
      expect((await susdeOf(ETHEREUM_SEPOLIA, payout)) - before).toBe(BigInt(settlements[0]!.shares!));
    } finally {
      await sql
        .raw(`DROP TRIGGER ${name} ON settlements; DROP FUNCTION ${name}(); DROP SEQUENCE ${name};`)
        .execute(stack.db);
    }
  }, 150_000);

  it('finding 4 — a recorded flush transaction that never reached the chain is re-sent from its record, once', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const payout = getAddress(merchant.account.address);
    const sessionId = await createSandboxSession(merchant, '7');
    const option = await optionOn(sessionId, ETHEREUM_SEPOLIA);
    const chain = stack.chain(ETHEREUM_SEPOLIA);
    const before = await susdeOf(ETHEREUM_SEPOLIA, payout);
    await pay(option);
    // Blocks are mined by hand until the flush is recorded; then the pending transaction is dropped from
    // the node, as if the broadcast had been lost (or never made, the worker dying right after recording).
    await chain.setAutomine(false);
    try {
      await confirm(ETHEREUM_SEPOLIA);
      const recorded = await waitFor(
        async () => {
          const row = await stack.db
            .selectFrom('settlements')
            .select(['flush_tx_hash', 'flush_raw_tx'])
            .where('session_id', '=', sessionId)
            .executeTakeFirst();
          if (!row?.flush_tx_hash) await chain.mine({ blocks: 1 });
          return row;
        },
        (row) => !!row?.flush_tx_hash,
        'recorded flush',
      );
      expect(recorded!.flush_raw_tx).toMatch(/^0x/);
      // anvil answers the hash it removed from its pool (null when it held no such transaction). The
      // worker notices within half a second and broadcasts the recorded transaction again.
      const dropped = await chain.request({
        method: 'anvil_dropTransaction' as never,
        params: [recorded!.flush_tx_hash] as never,
      });
      expect(dropped).toBe(recorded!.flush_tx_hash);
    } finally {
      await chain.setAutomine(true);
      await chain.mine({ blocks: 1 });
    }
    await waitForStatus(sessionId, 'completed', 90_000);
    const settlements = await settlementsOf(sessionId);
    expect(settlements).toHaveLength(1);
    expect((await susdeOf(ETHEREUM_SEPOLIA, payout)) - before).toBe(BigInt(settlements[0]!.shares!));
  }, 150_000);

  it('finding 4 — after a flush, re-checking the deposit finds it swept by us, not missing (a retry goes on to finish)', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const sessionId = await createSandboxSession(merchant, '3');
    const option = await optionOn(sessionId, ETHEREUM_SEPOLIA);
    await pay(option);
    await confirm(ETHEREUM_SEPOLIA);
    await waitForStatus(sessionId, 'completed', 90_000);
    const [deposit] = await depositsOf(sessionId);
    const activities = createSettlementActivities({
      db: stack.db,
      operator: stack.operator,
      slippageBps: 50,
    });
    const verified = await new MockActivityEnvironment().run(activities.verifyDepositBalance, {
      sessionId,
      chainId: ETHEREUM_SEPOLIA,
      token: option.tokenAddress,
      depositAddress: option.depositAddress,
      minimum: option.amount,
      txHash: deposit!.tx_hash,
      logIndex: deposit!.log_index,
    });
    expect(verified).toBe('0');
    // A transfer nobody flushed is still reported missing.
    await expect(
      new MockActivityEnvironment().run(activities.verifyDepositBalance, {
        sessionId,
        chainId: ETHEREUM_SEPOLIA,
        token: option.tokenAddress,
        depositAddress: option.depositAddress,
        minimum: option.amount,
        txHash: `0x${'ab'.repeat(32)}`,
        logIndex: 0,
      }),
    ).rejects.toThrow(/less than the 3000000 detected/);
  }, 150_000);

  it('finding 5 — a payment mined before expiry is on time even when the monitor sees it after expiry', async () => {
    const chain = stack.chain(ETHEREUM_SEPOLIA);
    // Chain time may run ahead of the wall clock (blocks mined in bursts): expire the session 5 s after
    // the chain's current time, by running the API's clock 55 s behind it with the shortest expiry.
    // The chain's time is its last block's, or the wall clock's once that is later (anvil stamps new blocks so).
    const chainNowMs = Math.max(Number((await chain.getBlock()).timestamp) * 1000, Date.now());
    const offsetMs = chainNowMs - Date.now() - 55_000;
    const app = await stack.startApp({ now: () => new Date(Date.now() + offsetMs) });
    const merchant = await signInNewMerchant(stack.app);
    const sk = await stack.app.request('/v1/merchants/me/api-keys', {
      method: 'POST',
      headers: merchant.auth,
      json: {},
    });
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${sk.body.rawKey}` },
      json: { amount: '2', sandboxMode: true, expiresInSec: 60 },
    });
    expect(created.status).toBe(201);
    const sessionId = created.body.id as string;
    const expiresAtMs = Date.parse(created.body.expiresAt);
    const option = await optionOn(sessionId, ETHEREUM_SEPOLIA);

    const txHash = await pay(option);
    const mined = await chain.getBlock({
      blockNumber: (await chain.getTransactionReceipt({ hash: txHash })).blockNumber,
    });
    expect(Number(mined.timestamp) * 1000).toBeLessThan(expiresAtMs);
    // The monitor lags: the deposit's confirmations only arrive after expiry.
    await sleep(Math.max(0, expiresAtMs - chainNowMs) + 2_000);
    await confirm(ETHEREUM_SEPOLIA);

    await waitForStatus(sessionId, 'completed', 90_000);
    expect((await depositsOf(sessionId)).map((deposit) => deposit.kind)).toEqual(['accepted']);
  }, 150_000);
});
