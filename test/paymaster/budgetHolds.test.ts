import { markDroppedOperations } from '../../db/paymasterUsage';
import type { TestApp } from '../harness/app';
import { MAINNET_CHAIN_ID, appsOnMainnetStandIn } from './mainnetStandIn';
import { paymasterRpc } from './paymasterApi';
import {
  OP_CHARGED_USD_MICRO,
  OP_COST_USD_MICRO,
  manualClock,
  merchantSponsoringTarget,
  signedDataRequest,
  usd,
  recordInclusion,
  TENTH_OF_MAXIMUM_WEI,
} from './signedDataRequests';

/**
 * Issue 13, finding 3: the platform daily budget was consumed at the maximum cost when signing and never
 * given back, so a few hundred signed-but-unsent requests blocked every merchant until midnight. Signing
 * now holds the maximum cost until the paymaster data's validUntil; the receipt replaces the hold with
 * the actual cost; mainnets and testnets have separate budgets; one merchant may hold only its share.
 *
 * Every request below costs at most 3.052512 USD (signedDataRequests.ts; the budget counts cost without
 * markup), each from a fresh sender. Each case has its own UTC day on an injected clock, so no other
 * test's holds share its window.
 */

const TESTNET = 84532;

const startApp = appsOnMainnetStandIn();

const sponsoringMerchant = (app: TestApp, chainId = TESTNET) => merchantSponsoringTarget(app, chainId);

const sign = async (app: TestApp, clientId: string, chainId = TESTNET) =>
  (await paymasterRpc(app, clientId, signedDataRequest({ chainId }))).body;

const GLOBAL_CAP = /^Policy denied: paymaster_global_cap_exceeded: /;

describe('issue 13 finding 3: the global daily budget can be exhausted by anyone', () => {
  it('signed operations hold the budget only until their validUntil (by the chain’s time, or after the release grace): unsent ones stop blocking other merchants then', async () => {
    const clock = manualClock('2031-06-01T12:00:00.000Z');
    const budget = usd(5n * OP_COST_USD_MICRO);
    const app = await startApp(
      {
        PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: budget,
        PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000',
      },
      clock.now,
    );
    const attacker = await sponsoringMerchant(app);
    const victim = await sponsoringMerchant(app);
    for (let index = 0; index < 5; index++) expect((await sign(app, attacker.clientId)).result).toBeDefined();
    expect((await sign(app, victim.clientId)).error.message).toMatch(GLOBAL_CAP);

    // 600 s of validity, the release grace (nothing told us the chain's time) and one more second:
    // nothing was sent, so nothing of the budget is held.
    clock.advance(600 + app.config.PAYMASTER_HOLD_RELEASE_GRACE_SEC + 1);
    expect((await sign(app, victim.clientId)).result).toBeDefined();
  });

  it('the receipt replaces the hold with the actual cost at once', async () => {
    // Room for two held operations and the actual cost of one that used a tenth of its maximum:
    // 101,750,400,000,000 wei = 0.305252 USD (rounded up to the micro-dollar).
    const clock = manualClock('2031-06-02T12:00:00.000Z');
    const budget = usd(2n * OP_COST_USD_MICRO + 305_252n);
    const app = await startApp(
      {
        PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: budget,
        PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000',
      },
      clock.now,
    );
    const { merchant, clientId } = await sponsoringMerchant(app);
    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).error.message).toMatch(GLOBAL_CAP);

    const [first] = await app.db
      .selectFrom('paymaster_usage')
      .select(['user_op_hash'])
      .where('merchant_id', '=', merchant.merchantId)
      .where('status', '=', 'submitted')
      .orderBy('seq')
      .execute();
    await recordInclusion(
      app.db,
      { chainId: TESTNET, userOpHash: first!.user_op_hash! },
      app.config.PAYMASTER_MARKUP_BPS,
    );
    // 0.305252 counted + 3.052512 still held: exactly one more operation fits.
    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).error.message).toMatch(GLOBAL_CAP);
  });

  it('mainnets and testnets have separate budgets', async () => {
    const clock = manualClock('2031-06-03T12:00:00.000Z');
    const app = await startApp(
      {
        PAYMASTER_PLATFORM_DAILY_BUDGET_USD: usd(2n * OP_COST_USD_MICRO),
        PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: usd(OP_COST_USD_MICRO),
        PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000',
      },
      clock.now,
    );
    const testnet = await sponsoringMerchant(app);
    const live = await sponsoringMerchant(app, MAINNET_CHAIN_ID);
    await app.db
      .insertInto('prepaid_ledger_entries')
      .values({
        merchant_id: live.merchant.merchantId,
        direction: 'credit',
        amount_usd: '100',
        description: 'top-up',
      })
      .execute();
    expect((await sign(app, testnet.clientId)).result).toBeDefined();
    expect((await sign(app, testnet.clientId)).error.message).toMatch(
      /^Policy denied: paymaster_global_cap_exceeded: the platform daily sponsorship budget for testnets is reached/,
    );
    // Testnet traffic never touches the mainnet budget: two mainnet operations still fit.
    expect((await sign(app, live.clientId, MAINNET_CHAIN_ID)).result).toBeDefined();
    expect((await sign(app, live.clientId, MAINNET_CHAIN_ID)).result).toBeDefined();
    expect((await sign(app, live.clientId, MAINNET_CHAIN_ID)).error.message).toMatch(
      /^Policy denied: paymaster_global_cap_exceeded: the platform daily sponsorship budget for mainnets is reached/,
    );
  });

  it('one merchant holds at most its share of the budget, so it cannot starve the others', async () => {
    const clock = manualClock('2031-06-04T12:00:00.000Z');
    const budget = usd(4n * OP_COST_USD_MICRO);
    const app = await startApp(
      {
        PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: budget,
        PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '5000',
      },
      clock.now,
    );
    const greedy = await sponsoringMerchant(app);
    const other = await sponsoringMerchant(app);
    expect((await sign(app, greedy.clientId)).result).toBeDefined();
    expect((await sign(app, greedy.clientId)).result).toBeDefined();
    expect((await sign(app, greedy.clientId)).error.message).toMatch(
      /^Policy denied: paymaster_global_cap_exceeded: this merchant's share \(50%\) of the platform daily sponsorship budget for testnets is reached/,
    );
    expect((await sign(app, other.clientId)).result).toBeDefined();
    expect((await sign(app, other.clientId)).result).toBeDefined();
  });
});

describe('security review II, finding 9: holds released by the server clock', () => {
  it('finding 9 — a hold is released once the chain’s time is past its validUntil (or after the grace), not by the server clock, so a prepaid balance never goes negative', async () => {
    const clock = manualClock('2031-06-05T12:00:00.000Z');
    const app = await startApp({}, clock.now);
    const { merchant, clientId } = await sponsoringMerchant(app, MAINNET_CHAIN_ID);
    // Exactly one operation's maximum charge (markup included).
    await app.db
      .insertInto('prepaid_ledger_entries')
      .values({
        merchant_id: merchant.merchantId,
        direction: 'credit',
        amount_usd: usd(OP_CHARGED_USD_MICRO),
        description: 'top-up',
      })
      .execute();
    const signOnMainnet = () => sign(app, clientId, MAINNET_CHAIN_ID);
    const BALANCE_RESERVED = /^Policy denied: paymaster_billing_balance_exhausted: /;
    expect((await signOnMainnet()).result).toBeDefined();
    expect((await signOnMainnet()).error.message).toMatch(BALANCE_RESERVED);

    // The server's clock passes validUntil; the chain has not said so (its blocks may lag our clock, and
    // the operation can still be included): the reservation still holds.
    clock.advance(601);
    expect((await signOnMainnet()).error.message).toMatch(BALANCE_RESERVED);

    // The operation is included at its maximum cost: the balance is spent to exactly zero, never below.
    const [signed] = await app.db
      .selectFrom('paymaster_usage')
      .select(['user_op_hash', 'valid_until'])
      .where('merchant_id', '=', merchant.merchantId)
      .where('status', '=', 'submitted')
      .execute();
    await recordInclusion(
      app.db,
      {
        chainId: MAINNET_CHAIN_ID,
        userOpHash: signed!.user_op_hash!,
        actualGasCost: 10n * TENTH_OF_MAXIMUM_WEI,
      },
      app.config.PAYMASTER_MARKUP_BPS,
    );
    const balance = await app.db
      .selectFrom('prepaid_balances')
      .select('balance_usd')
      .where('merchant_id', '=', merchant.merchantId)
      .executeTakeFirstOrThrow();
    expect(balance.balance_usd).toBe('0.000000');

    // Topped up again: a new hold, its operation never sent. The receipt tracker, reading a block whose
    // time is past validUntil, drops the operation and releases its hold at once.
    await app.db
      .insertInto('prepaid_ledger_entries')
      .values({
        merchant_id: merchant.merchantId,
        direction: 'credit',
        amount_usd: usd(OP_CHARGED_USD_MICRO),
        description: 'top-up',
      })
      .execute();
    expect((await signOnMainnet()).result).toBeDefined();
    expect((await signOnMainnet()).error.message).toMatch(BALANCE_RESERVED);
    const [unsent] = await app.db
      .selectFrom('paymaster_usage')
      .select('valid_until')
      .where('merchant_id', '=', merchant.merchantId)
      .where('status', '=', 'submitted')
      .execute();
    await markDroppedOperations(app.db, {
      chainId: MAINNET_CHAIN_ID,
      validBefore: new Date(unsent!.valid_until!.getTime() + 1000),
      // The tracker drops the whole chain's; here only this test's rows (other files sign on this chain too).
      merchantId: merchant.merchantId,
    });
    expect((await signOnMainnet()).result).toBeDefined();

    // Without the tracker, the server clock releases a hold only after the grace.
    clock.advance(601);
    expect((await signOnMainnet()).error.message).toMatch(BALANCE_RESERVED);
    clock.advance(app.config.PAYMASTER_HOLD_RELEASE_GRACE_SEC);
    expect((await signOnMainnet()).result).toBeDefined();
  });
});
