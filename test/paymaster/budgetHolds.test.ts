import { randomBytes } from 'node:crypto';
import { type Address, type Hex, encodeFunctionData, parseAbi } from 'viem';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { recordReceiptAndCharge } from '../../db/gasCharges';
import { type TestApp, startTestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { MAINNET_CHAIN_ID, type MainnetStandIn, startMainnetStandIn } from './mainnetStandIn';
import { allowContract, createPaymasterClient, paymasterRpc } from './paymasterApi';

/**
 * Issue 13, finding 3: the platform daily budget was consumed at the maximum cost when signing and never
 * given back, so a few hundred signed-but-unsent requests blocked every merchant until midnight. Signing
 * now holds the maximum cost until the paymaster data's validUntil; the receipt replaces the hold with
 * the actual cost; mainnets and testnets have separate budgets; one merchant may hold only its share.
 *
 * Every request below costs at most (0x30000 + 0x30000 + 0x10000 + 50,000) gas × 2 gwei
 * = 0.001017504 ETH = 3.052512 USD at the local feed's 3,000 USD (the budget counts cost without
 * markup). Each case has its own UTC day on an injected clock, so no other test's holds share its window.
 */

const TESTNET = 84532;
const TARGET: Address = '0x1000000000000000000000000000000000000001';
const OP_COST_USD_MICRO = 3_052_512n;
const usd = (micro: bigint) => `${micro / 1_000_000n}.${(micro % 1_000_000n).toString().padStart(6, '0')}`;

const callData: Hex = encodeFunctionData({
  abi: parseAbi(['function execute(address dest, uint256 value, bytes func)']),
  functionName: 'execute',
  args: [TARGET, 0n, '0x'],
});

/** A fresh sender for every request, as an attacker would use. */
const signedDataRequest = (chainId: number) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'pm_getPaymasterData',
  params: [
    {
      sender: `0x${randomBytes(20).toString('hex')}`,
      nonce: '0x0',
      callData,
      callGasLimit: '0x30000',
      verificationGasLimit: '0x30000',
      preVerificationGas: '0x10000',
      maxFeePerGas: '0x77359400',
      maxPriorityFeePerGas: '0x3b9aca00',
      signature: '0x',
    },
    ENTRY_POINT_V07_ADDRESS,
    chainId,
  ],
});

function manualClock(iso: string) {
  let current = new Date(iso);
  return {
    now: () => current,
    advance: (seconds: number) => (current = new Date(current.getTime() + seconds * 1000)),
  };
}

let mainnet: MainnetStandIn;
const opened: TestApp[] = [];
beforeAll(async () => {
  mainnet = await startMainnetStandIn();
});
afterAll(async () => {
  await Promise.all(opened.map((app) => app.close()));
  await mainnet?.stop();
});

async function startApp(env: Record<string, string>, now: () => Date): Promise<TestApp> {
  const app = await startTestApp({ LOG_LEVEL: 'warn', ...mainnet.appEnv, ...env }, { now });
  opened.push(app);
  return app;
}

async function sponsoringMerchant(
  app: TestApp,
  chainId = TESTNET,
): Promise<{ merchant: SignedInMerchant; clientId: string }> {
  const merchant = await signInNewMerchant(app);
  const { clientId } = await createPaymasterClient(app, merchant, {
    environment: chainId === MAINNET_CHAIN_ID ? 'live' : 'test',
    allowedChainIds: [chainId],
  });
  await allowContract(app, merchant, chainId, TARGET);
  return { merchant, clientId };
}

const sign = async (app: TestApp, clientId: string, chainId = TESTNET) =>
  (await paymasterRpc(app, clientId, signedDataRequest(chainId))).body;

const GLOBAL_CAP = /^Policy denied: paymaster_global_cap_exceeded: /;

describe('issue 13 finding 3: the global daily budget can be exhausted by anyone', () => {
  it('signed operations hold the budget only until their validUntil: unsent ones stop blocking other merchants then', async () => {
    const clock = manualClock('2031-06-01T12:00:00.000Z');
    const budget = usd(5n * OP_COST_USD_MICRO);
    const app = await startApp(
      {
        PAYMASTER_PLATFORM_DAILY_BUDGET_USD: budget,
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
        PAYMASTER_PLATFORM_DAILY_BUDGET_USD: budget,
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
    await recordReceiptAndCharge(
      app.db,
      {
        chainId: TESTNET,
        entryPoint: ENTRY_POINT_V07_ADDRESS,
        userOpHash: first!.user_op_hash!,
        success: true,
        actualGasCost: 101_750_400_000_000n,
        actualGasUsed: 100_000n,
        txHash: `0x${randomBytes(32).toString('hex')}`,
        blockNumber: 1n,
      },
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
        PAYMASTER_PLATFORM_DAILY_BUDGET_USD: budget,
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
