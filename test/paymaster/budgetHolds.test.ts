import type { TestApp } from '../harness/app';
import { MAINNET_CHAIN_ID, appsOnMainnetStandIn } from './mainnetStandIn';
import { paymasterRpc } from './paymasterApi';
import {
  OP_COST_USD_MICRO,
  manualClock,
  merchantSponsoringTarget,
  signedDataRequest,
  usd,
  recordInclusion,
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
  it('signed operations hold the budget only until their validUntil: unsent ones stop blocking other merchants then', async () => {
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

    // 600 s of validity and one more second: nothing was sent, so nothing of the budget is held.
    clock.advance(601);
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
