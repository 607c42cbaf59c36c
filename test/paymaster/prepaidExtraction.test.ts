import type { Hex } from 'viem';

import { creditPrepaidBalance } from '../../db/prepaidLedger';
import type { TestApp } from '../harness/app';
import type { SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { MAINNET_CHAIN_ID, appsOnMainnetStandIn } from './mainnetStandIn';
import { createPaymasterClient, paymasterRpc } from './paymasterApi';
import {
  OP_CHARGED_USD_MICRO,
  manualClock,
  merchantSponsoringTarget,
  signedDataRequest,
  usd,
  recordInclusion,
} from './signedDataRequests';
import { rpc } from './smartAccounts';

/**
 * Issue 13, finding 2: with a publishable client id, fresh senders and inflated priority fees, anyone
 * could bill a merchant for fees that go to the bundler: the gate was only "balance > 0". Now signing
 * reserves the operation's maximum cost (markup included) against the prepaid balance until validUntil
 * (the receipt replaces it with the actual charge), a per-merchant daily cap and a merchant-set
 * per-client cap apply, and fees far above the chain's current fees are refused.
 *
 * Each request's maximum is 3.357764 USD with the 10 % markup (signedDataRequests.ts), from a fresh sender.
 */

const startApp = appsOnMainnetStandIn();

async function setUp(now: () => Date, env: Record<string, string> = {}) {
  const app = await startApp(env, now);
  return { app, ...(await merchantSponsoringTarget(app, MAINNET_CHAIN_ID)) };
}

const sign = async (
  app: TestApp,
  clientId: string,
  fees?: { maxFeePerGas?: Hex; maxPriorityFeePerGas?: Hex },
) =>
  (await paymasterRpc(app, clientId, signedDataRequest({ chainId: MAINNET_CHAIN_ID, fields: { ...fees } })))
    .body;

const balanceOf = async (app: TestApp, merchant: SignedInMerchant) =>
  (await app.request('/v1/merchants/me/balance', { headers: merchant.auth })).body.prepaidBalanceUsd;

describe('issue 13 finding 2: a publishable client id can extract the prepaid balance', () => {
  it("signing reserves each operation's maximum cost against the balance until its validUntil", async () => {
    const clock = manualClock('2031-07-01T12:00:00.000Z');
    const { app, merchant, clientId } = await setUp(clock.now);
    // Room for two maximum charges and a little: the third is refused although the balance is positive.
    await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: usd(2n * OP_CHARGED_USD_MICRO + 1_000_000n),
      description: 'top-up',
    });
    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).result).toBeDefined();
    const refused = await sign(app, clientId);
    expect(refused.error).toEqual({
      code: -32600,
      message: expect.stringMatching(/^Policy denied: paymaster_billing_balance_exhausted: /),
    });
    // Reserving is not charging: the balance itself is untouched.
    expect(await balanceOf(app, merchant)).toBe(usd(2n * OP_CHARGED_USD_MICRO + 1_000_000n));

    // Neither operation was sent: past their validUntil and the release grace (no receipt tracker runs
    // here to read the chain's time) the reservations are gone.
    clock.advance(600 + app.config.PAYMASTER_HOLD_RELEASE_GRACE_SEC + 1);
    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).error.message).toMatch(/paymaster_billing_balance_exhausted/);
  });

  it('an included operation gives its reservation back and is charged its actual cost', async () => {
    const clock = manualClock('2031-07-02T12:00:00.000Z');
    const { app, merchant, clientId } = await setUp(clock.now);
    await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: usd(OP_CHARGED_USD_MICRO),
      description: 'top-up',
    });
    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).error.message).toMatch(/paymaster_billing_balance_exhausted/);
    const [row] = await app.db
      .selectFrom('paymaster_usage')
      .select('user_op_hash')
      .where('merchant_id', '=', merchant.merchantId)
      .where('status', '=', 'submitted')
      .execute();
    // Included at a tenth of its maximum: 0.0001017504 ETH = 0.305252 USD, 0.335777 USD with markup.
    await recordInclusion(
      app.db,
      { chainId: MAINNET_CHAIN_ID, userOpHash: row!.user_op_hash! },
      app.config.PAYMASTER_MARKUP_BPS,
    );
    expect(await balanceOf(app, merchant)).toBe(usd(OP_CHARGED_USD_MICRO - 335_777n));
    // What is left is less than one maximum charge: still refused, now by the smaller balance.
    expect((await sign(app, clientId)).error.message).toMatch(/paymaster_billing_balance_exhausted/);
    await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: '0.335777',
      description: 'top-up',
    });
    expect((await sign(app, clientId)).result).toBeDefined();
  });

  it('a per-merchant daily cap and a merchant-set per-client cap bound what any client id can spend', async () => {
    const clock = manualClock('2031-07-03T12:00:00.000Z');
    const { app, merchant, clientId } = await setUp(clock.now);
    await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: '1000',
      description: 'top-up',
    });
    const second = await createPaymasterClient(app, merchant, {
      environment: 'live',
      allowedChainIds: [MAINNET_CHAIN_ID],
    });
    const patch = await app.request('/v1/paymaster/limits', {
      method: 'PATCH',
      headers: merchant.auth,
      json: {
        perClientDailyUsd: usd(2n * OP_CHARGED_USD_MICRO),
        perMerchantDailyUsd: usd(3n * OP_CHARGED_USD_MICRO),
      },
    });
    expect(patch.status).toBe(200);
    expect(patch.body.merchant).toMatchObject({
      perClientDailyUsd: usd(2n * OP_CHARGED_USD_MICRO).replace(/0+$/, ''),
      perMerchantDailyUsd: usd(3n * OP_CHARGED_USD_MICRO).replace(/0+$/, ''),
    });
    expect(patch.body.platform).toMatchObject({ perClientDailyUsd: null, perMerchantDailyUsd: '10000' });

    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).result).toBeDefined();
    expect((await sign(app, clientId)).error.message).toMatch(
      new RegExp(
        `^Policy denied: paymaster_spend_cap_exceeded: client ${clientId} reached its daily sponsorship cap of 6\\.715528 USD \\(merchant-configured cap\\)$`,
      ),
    );
    expect((await sign(app, second.clientId)).result).toBeDefined();
    expect((await sign(app, second.clientId)).error.message).toMatch(
      /^Policy denied: paymaster_spend_cap_exceeded: the merchant reached its daily sponsorship cap of 10\.073292 USD on mainnets \(merchant-configured cap\)$/,
    );
    const usage = await app.db
      .selectFrom('paymaster_usage')
      .select('status')
      .where('merchant_id', '=', merchant.merchantId)
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(usage.status).toBe('denied_spend_cap');
  });

  it("fees far above the chain's current fees are refused before anything is reserved", async () => {
    const clock = manualClock('2031-07-04T12:00:00.000Z');
    const { app, merchant, clientId } = await setUp(clock.now);
    await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: '1000',
      description: 'top-up',
    });
    // The chain this mainnet stand-in reads: base fee and tip as the API sees them.
    const local = testStack().chains.find((chain) => chain.chainId === 84532)!;
    const tip = BigInt(await rpc<Hex>(local.rpcUrl, 'eth_maxPriorityFeePerGas', []));
    const inflatedTip = `0x${(tip * 100n).toString(16)}` as Hex;

    const tipRefused = await sign(app, clientId, {
      maxFeePerGas: inflatedTip,
      maxPriorityFeePerGas: inflatedTip,
    });
    expect(tipRefused.error).toEqual({
      code: -32602,
      message: expect.stringMatching(/^Policy denied: paymaster_gas_price_too_high: maxFeePerGas /),
    });
    const feeRefused = await sign(app, clientId, { maxFeePerGas: '0xe8d4a51000' });
    expect(feeRefused.error.message).toMatch(
      /^Policy denied: paymaster_gas_price_too_high: maxFeePerGas 1000000000000 /,
    );
    const latest = await app.db
      .selectFrom('paymaster_usage')
      .select(['status', 'reason'])
      .where('merchant_id', '=', merchant.merchantId)
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(latest).toEqual({ status: 'denied_malformed', reason: 'gas_price_too_high' });
    // Ordinary fees still pass.
    expect((await sign(app, clientId)).result).toBeDefined();
  });
});
