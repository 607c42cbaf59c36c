import { creditPrepaidBalance } from '../../db/prepaidLedger';
import { type TestApp, startTestApp } from '../harness/app';
import { MAINNET_CHAIN_ID, type MainnetStandIn, startMainnetStandIn } from './mainnetStandIn';
import { paymasterRpc } from './paymasterApi';
import {
  freshSender,
  merchantSponsoringTarget,
  signedDataRequest,
  recordInclusion,
} from './signedDataRequests';

/**
 * Issue 13, finding 4: signatures are deterministic and validUntil has one-second resolution, so two
 * identical requests in one second produce one userOpHash. That hash is now unique per (chain, entry
 * point): a repeat answers the stored result and consumes no limits, and the operation is charged once.
 * The app's clock is fixed, so every identical request here lands in the same second.
 */

const TESTNET = 84532;
const clock = new Date(Math.floor(Date.now() / 1000) * 1000);

let app: TestApp;
let mainnet: MainnetStandIn;

beforeAll(async () => {
  mainnet = await startMainnetStandIn();
  app = await startTestApp(mainnet.appEnv, { now: () => clock });
});
afterAll(async () => {
  await app?.close();
  await mainnet?.stop();
});

const sponsoringMerchant = (chainId: number) => merchantSponsoringTarget(app, chainId);

const signedRowsOf = (merchantId: string) =>
  app.db
    .selectFrom('paymaster_usage')
    .select(['user_op_hash', 'status'])
    .where('merchant_id', '=', merchantId)
    .execute();

describe('issue 13 finding 4: the same operation signed twice is charged twice', () => {
  it('a repeated request answers the same signed data, records one usage row and consumes no limits', async () => {
    const { merchant, clientId } = await sponsoringMerchant(TESTNET);
    const limits = await app.request('/v1/paymaster/limits', {
      method: 'PATCH',
      headers: merchant.auth,
      json: { perSenderHourlyOps: 2 },
    });
    expect(limits.status).toBe(200);
    const sender = freshSender();

    const first = await paymasterRpc(app, clientId, signedDataRequest({ sender, chainId: TESTNET }));
    const repeat = await paymasterRpc(app, clientId, signedDataRequest({ sender, chainId: TESTNET }));
    expect(first.body.result).toBeDefined();
    expect(repeat.body).toEqual(first.body);
    expect(await signedRowsOf(merchant.merchantId)).toEqual([
      { user_op_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), status: 'submitted' },
    ]);

    // The repeat took nothing: a second operation of the sender still fits its limit of 2, a third does not.
    const second = await paymasterRpc(
      app,
      clientId,
      signedDataRequest({ sender, chainId: TESTNET, nonce: 1 }),
    );
    expect(second.body.result).toBeDefined();
    const third = await paymasterRpc(
      app,
      clientId,
      signedDataRequest({ sender, chainId: TESTNET, nonce: 2 }),
    );
    expect(third.body.error.message).toMatch(/^Policy denied: paymaster_rate_limit_exceeded/);
  });

  it('ten simultaneous identical requests: one signature answered ten times, one usage row', async () => {
    const { merchant, clientId } = await sponsoringMerchant(TESTNET);
    const sender = freshSender();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        paymasterRpc(app, clientId, signedDataRequest({ sender, chainId: TESTNET })),
      ),
    );
    const results = responses.map((response) => JSON.stringify(response.body.result));
    expect(responses[0]!.body.result).toBeDefined();
    expect(new Set(results).size).toBe(1);
    expect(await signedRowsOf(merchant.merchantId)).toHaveLength(1);
  });

  it('across two merchants: the second gets the stored result and records nothing, so the operation has one owner', async () => {
    const a = await sponsoringMerchant(TESTNET);
    const b = await sponsoringMerchant(TESTNET);
    const sender = freshSender();
    const first = await paymasterRpc(app, a.clientId, signedDataRequest({ sender, chainId: TESTNET }));
    const second = await paymasterRpc(app, b.clientId, signedDataRequest({ sender, chainId: TESTNET }));
    expect(first.body.result).toBeDefined();
    expect(second.body.result).toEqual(first.body.result);
    expect(await signedRowsOf(a.merchant.merchantId)).toHaveLength(1);
    expect(await signedRowsOf(b.merchant.merchantId)).toEqual([]);
  });

  it('on a mainnet the included operation, requested twice, is charged once', async () => {
    const { merchant, clientId } = await sponsoringMerchant(MAINNET_CHAIN_ID);
    await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: '100',
      description: 'top-up',
    });
    const sender = freshSender();
    const first = await paymasterRpc(app, clientId, signedDataRequest({ sender, chainId: MAINNET_CHAIN_ID }));
    const repeat = await paymasterRpc(
      app,
      clientId,
      signedDataRequest({ sender, chainId: MAINNET_CHAIN_ID }),
    );
    expect(repeat.body.result).toEqual(first.body.result);
    const rows = await signedRowsOf(merchant.merchantId);
    expect(rows).toHaveLength(1);

    const outcome = await recordInclusion(
      app.db,
      { chainId: MAINNET_CHAIN_ID, userOpHash: rows[0]!.user_op_hash!, actualGasCost: 200_000_000_000_000n },
      app.config.PAYMASTER_MARKUP_BPS,
    );
    expect(outcome).toEqual({ recorded: 1, charged: 1 });
    const charges = await app.db
      .selectFrom('gas_charges')
      .select('amount_usd')
      .where('user_op_hash', '=', rows[0]!.user_op_hash!)
      .execute();
    // 0.0002 ETH at 3,000 USD plus 10 % markup.
    expect(charges).toEqual([{ amount_usd: '0.660000' }]);
  });
});
