import { randomBytes, randomUUID } from 'node:crypto';
import { creditPrepaidBalance, prepaidBalanceUsd } from '../../db/prepaidLedger';
import { openPeriodCharge } from '../../db/subscriptionCharges';
import { billRedemptionGas, subscriptionGasReference } from '../../db/subscriptionGasCharges';
import { insertSubscription } from '../../db/subscriptions';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';

/**
 * The subscription executor's redemption gas, billed to the merchant's prepaid balance (issue 42), on the
 * real database: on a mainnet, cost × ETH/USD plus the paymaster's markup, rounded up to the micro-dollar,
 * debited once per period charge however many attempts bill it at once; on a testnet nothing (testnet gas
 * is not the merchant's money); without a fresh price the charge is kept unpriced and nothing is debited.
 */
const MAINNET = 1;
const BASE_SEPOLIA = 84532;
const ETH_USD_3000 = 300_000_000_000n;
/** 0.0001 ETH: at 3,000 USD and a 10 % markup, 0.33 USD. */
const GAS_COST_WEI = 100_000_000_000_000n;

describe('redemption gas billed to the prepaid balance', () => {
  let app: TestApp;
  let merchantId: string;
  let sk: { authorization: string };
  let planId: string;

  beforeAll(async () => {
    app = await startTestApp();
    const merchant = await signInNewMerchant(app);
    merchantId = merchant.merchantId;
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    const plan = await app.request('/v1/plans', {
      method: 'POST',
      headers: sk,
      json: { name: 'Monthly', amount: '10', interval: 'month' },
    });
    planId = plan.body.id;
    await creditPrepaidBalance(app.db, {
      merchantId,
      amountUsd: '10',
      description: 'test top-up',
      reference: `test-topup:${randomUUID()}`,
    });
  });
  afterAll(() => app.close());

  /** A period charge row of a fresh subscription on `chainId`. */
  async function periodCharge(chainId: number): Promise<string> {
    const subscription = (await insertSubscription(app.db, {
      id: randomUUID(),
      merchantId,
      planId,
      status: 'active',
      customerAccount: '0x00000000000000000000000000000000000000c1',
      chainId,
      tokenSymbol: 'USDC',
      tokenAddress: '0x00000000000000000000000000000000000000a1',
      periodAmount: 10_000_000n,
      periodSeconds: 30 * 86_400,
      delegationJson: '{}',
      delegationHash: `0x${randomBytes(32).toString('hex')}`,
      currentPeriodStart: new Date(),
      currentPeriodEnd: new Date(Date.now() + 30 * 86_400_000),
    }))!;
    const session = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '10' },
    });
    const { charge } = await openPeriodCharge(app.db, {
      subscriptionId: subscription.id,
      periodIndex: 0,
      sessionId: session.body.id,
    });
    return charge.id;
  }

  const gasOf = (subscriptionChargeId: string, chainId: number, ethUsdAnswer: bigint | undefined) => ({
    merchantId,
    subscriptionChargeId,
    chainId,
    txHash: `0x${randomBytes(32).toString('hex')}`,
    gasCostWei: GAS_COST_WEI,
    markupBps: 1000,
    ethUsdAnswer,
  });

  const debitsOf = (subscriptionChargeId: string) =>
    app.db
      .selectFrom('prepaid_ledger_entries')
      .select(['direction', 'amount_usd'])
      .where('reference', '=', subscriptionGasReference(subscriptionChargeId))
      .execute();

  it('debits a mainnet redemption once, at cost × price plus markup, however many attempts bill it at once', async () => {
    const chargeId = await periodCharge(MAINNET);
    const before = await prepaidBalanceUsd(app.db, merchantId);
    const outcomes = await Promise.all(
      [1, 2, 3].map(() => billRedemptionGas(app.db, gasOf(chargeId, MAINNET, ETH_USD_3000))),
    );
    expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual([
      'already_billed',
      'already_billed',
      'billed',
    ]);
    const rows = await app.db
      .selectFrom('subscription_gas_charges')
      .selectAll()
      .where('subscription_charge_id', '=', chargeId)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      merchant_id: merchantId,
      chain_id: MAINNET,
      gas_cost_wei: GAS_COST_WEI.toString(),
      eth_usd_price: '3000.00000000',
      markup_bps: 1000,
      amount_usd: '0.330000',
    });
    expect(await debitsOf(chargeId)).toEqual([{ direction: 'debit', amount_usd: '0.330000' }]);
    expect(Number(before) - Number(await prepaidBalanceUsd(app.db, merchantId))).toBeCloseTo(0.33, 6);
  });

  it('bills nothing for a testnet redemption', async () => {
    const chargeId = await periodCharge(BASE_SEPOLIA);
    expect(await billRedemptionGas(app.db, gasOf(chargeId, BASE_SEPOLIA, ETH_USD_3000))).toEqual({
      kind: 'not_charged_testnet',
    });
    expect(
      await app.db
        .selectFrom('subscription_gas_charges')
        .select('id')
        .where('subscription_charge_id', '=', chargeId)
        .execute(),
    ).toEqual([]);
    expect(await debitsOf(chargeId)).toEqual([]);
  });

  it('keeps a redemption without a fresh price unpriced and debits nothing', async () => {
    const chargeId = await periodCharge(MAINNET);
    const before = await prepaidBalanceUsd(app.db, merchantId);
    const outcome = await billRedemptionGas(app.db, gasOf(chargeId, MAINNET, undefined));
    expect(outcome).toMatchObject({ kind: 'billed', charge: { eth_usd_price: null, amount_usd: null } });
    expect(await debitsOf(chargeId)).toEqual([]);
    expect(await prepaidBalanceUsd(app.db, merchantId)).toBe(before);
  });
});
