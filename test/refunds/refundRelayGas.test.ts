import { randomBytes, randomUUID } from 'node:crypto';
import { recordRefundRelayGas, refundGasReference } from '../../db/refundGasCharges';
import { findRefundById } from '../../db/refunds';
import { prepaidBalanceUsd } from '../../db/prepaidLedger';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';

/**
 * A relayed forwarder refund's gas (docs/decisions.md "Forwarder refunds: authorization, relay and gas"): on a
 * mainnet it is debited from the prepaid balance like a sponsored operation's — actual cost × the ETH/USD
 * price fixed at authorization × (1 + markup), rounded up once — exactly once however often the refund's step
 * runs; a testnet refund (no price fixed) records its gas and debits nothing.
 */
describe('refund relay gas', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let sk: { authorization: string };

  beforeAll(async () => {
    app = await startTestApp();
    merchant = await signInNewMerchant(app);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
  });
  afterAll(() => app.close());

  /** A succeeded forwarder refund row of a fresh session, priced like a mainnet's when `price` is given. */
  async function relayedRefund(price?: { ethUsdPrice: string; markupBps: number }) {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '5', sandboxMode: true, paymentOptionSymbols: ['USDC'] },
    });
    const option = (await app.request(`/v1/sessions/${created.body.id}`)).body.paymentOptions[0];
    const id = randomUUID();
    await app.db
      .insertInto('refunds')
      .values({
        id,
        merchant_id: merchant.merchantId,
        session_id: created.body.id,
        amount: '5',
        status: 'succeeded',
        source: 'forwarder',
        chain_id: option.chainId,
        token_symbol: 'USDC',
        token_address: option.tokenAddress.toLowerCase(),
        token_decimals: 6,
        amount_units: '5000000',
        address: `0x${randomBytes(20).toString('hex')}`,
        forwarder_address: option.depositAddress.toLowerCase(),
        payout_address: merchant.account.address,
        authorization_signature: `0x${'11'.repeat(65)}`,
        tx_hash: `0x${randomBytes(32).toString('hex')}`,
        succeeded_at: new Date(),
        relay_eth_usd_price: price?.ethUsdPrice ?? null,
        relay_markup_bps: price?.markupBps ?? null,
      })
      .execute();
    return (await findRefundById(app.db, id))!;
  }

  const debitsOf = (refundId: string) =>
    app.db
      .selectFrom('prepaid_ledger_entries')
      .select(['direction', 'amount_usd'])
      .where('reference', '=', refundGasReference(refundId))
      .execute();

  it('debits a mainnet relay once, at the authorization’s price with the markup, rounded up', async () => {
    const row = await relayedRefund({ ethUsdPrice: '3000.12345678', markupBps: 1000 });
    const before = await prepaidBalanceUsd(app.db, merchant.merchantId);
    // 94,000 gas at 20 gwei = 0.00188 ETH; × 3000.12345678 × 1.1 = 6.2042553… → 6.204256.
    const gasWei = 94_000n * 20_000_000_000n;
    await app.db.transaction().execute((trx) => recordRefundRelayGas(trx, row, gasWei));
    await app.db.transaction().execute((trx) => recordRefundRelayGas(trx, row, gasWei));
    expect(await debitsOf(row.id)).toEqual([{ direction: 'debit', amount_usd: '6.204256' }]);
    // The merchant had no prepaid balance: the debit takes it below zero, as a receipt's charge may.
    expect([before, await prepaidBalanceUsd(app.db, merchant.merchantId)]).toEqual(['0.000000', '-6.204256']);
    expect((await findRefundById(app.db, row.id))!.relay_gas_wei).toBe(gasWei.toString());
  });

  it('records a testnet relay’s gas and debits nothing', async () => {
    const row = await relayedRefund();
    await app.db.transaction().execute((trx) => recordRefundRelayGas(trx, row, 123_456n));
    expect(await debitsOf(row.id)).toEqual([]);
    expect((await findRefundById(app.db, row.id))!.relay_gas_wei).toBe('123456');
  });
});
