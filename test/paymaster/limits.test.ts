import { sql } from 'kysely';
import { createWalletClient, defineChain, http, publicActions, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { LocalPriceFeed } from '../../contracts/artifacts';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { startFakeSigner } from './fakeSigner';
import { paymasterRpc } from './paymasterApi';
import { manualClock, merchantSponsoringTarget, signedDataRequest } from './signedDataRequests';

/**
 * Sponsorship limits and prices: the three views and the PATCH rules of `/v1/paymaster/limits`, the
 * `(merchant-configured cap)` suffix, stub data that reads but never consumes, the hourly window and
 * the 00:00 UTC budget reset on an injected clock, the merchant per-transaction cap, and refusals
 * when the ETH/USD feed is stale. Each case uses its own UTC day, so windows never meet.
 */

const CHAIN_ID = 84532;
/** Deploys this file's own price feeds (no other test file sends from this account). */
const FEED_OWNER = ANVIL_DEV_ACCOUNTS[6]!;

let nonce = 0;
const rpcRequest = (method: string, sender: Address) =>
  signedDataRequest({ method, id: ++nonce, sender, nonce, chainId: CHAIN_ID });

interface Setup {
  app: TestApp;
  merchant: SignedInMerchant;
  clientId: string;
}

const opened: TestApp[] = [];
afterAll(() => Promise.all(opened.map((app) => app.close())));

async function setUp(env: Record<string, string>, now: () => Date): Promise<Setup> {
  const app = await startTestApp({ LOG_LEVEL: 'warn', ...env }, { now });
  opened.push(app);
  return { app, ...(await merchantSponsoringTarget(app, CHAIN_ID)) };
}

const patchLimits = (setup: Setup, json: Record<string, unknown>) =>
  setup.app.request('/v1/paymaster/limits', { method: 'PATCH', headers: setup.merchant.auth, json });

const call = async (setup: Setup, method: string, sender: Address) =>
  (await paymasterRpc(setup.app, setup.clientId, rpcRequest(method, sender))).body;

async function latestUsageRow(setup: Setup) {
  return setup.app.db
    .selectFrom('paymaster_usage')
    .selectAll()
    .where('merchant_id', '=', setup.merchant.merchantId)
    .orderBy('seq', 'desc')
    .executeTakeFirstOrThrow();
}

describe('GET and PATCH /v1/paymaster/limits', () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await setUp({}, () => new Date());
  });

  /** The platform's own limits (defaults), shown in the platform and effective views, null in the merchant's. */
  const PLATFORM_ONLY = {
    dailyBudgetUsd: '100000',
    testnetDailyBudgetUsd: '1000',
    merchantBudgetShareBps: 2000,
    feeBoundBps: 30000,
    maxOperationGas: 15000000,
  };
  const NOT_THE_MERCHANTS = {
    dailyBudgetUsd: null,
    testnetDailyBudgetUsd: null,
    merchantBudgetShareBps: null,
    feeBoundBps: null,
    maxOperationGas: null,
  };
  const platform = {
    perSenderHourlyOps: 500,
    perSenderDailyUsd: '500',
    perTxUsd: null,
    perMerchantDailyUsd: '10000',
    perClientDailyUsd: null,
    ...PLATFORM_ONLY,
  };

  it('shows platform limits from configuration, no merchant limits, and the platform as effective', async () => {
    const response = await setup.app.request('/v1/paymaster/limits', { headers: setup.merchant.auth });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      platform,
      merchant: {
        perSenderHourlyOps: null,
        perSenderDailyUsd: null,
        perTxUsd: null,
        perMerchantDailyUsd: null,
        perClientDailyUsd: null,
        ...NOT_THE_MERCHANTS,
      },
      effective: platform,
    });
  });

  it('tightens, refuses a looser value with 400, keeps keys left out, and null clears', async () => {
    const tightened = await patchLimits(setup, {
      perSenderHourlyOps: 20,
      perSenderDailyUsd: '12.5',
      perTxUsd: '2',
      perMerchantDailyUsd: '250',
      perClientDailyUsd: '40.5',
    });
    expect(tightened.status).toBe(200);
    const merchantSet = {
      perSenderHourlyOps: 20,
      perSenderDailyUsd: '12.5',
      perTxUsd: '2',
      perMerchantDailyUsd: '250',
      perClientDailyUsd: '40.5',
    };
    expect(tightened.body).toEqual({
      platform,
      merchant: { ...merchantSet, ...NOT_THE_MERCHANTS },
      effective: { ...merchantSet, ...PLATFORM_ONLY },
    });

    const looserMerchantCap = await patchLimits(setup, { perMerchantDailyUsd: '10000.5' });
    expect(looserMerchantCap.status).toBe(400);
    expect(looserMerchantCap.body.message).toMatch(/^Validation failed: perMerchantDailyUsd: /);
    for (const platformOnly of Object.keys(PLATFORM_ONLY)) {
      const refused = await patchLimits(setup, { [platformOnly]: 1 });
      expect(refused.status).toBe(400);
    }

    const looserOps = await patchLimits(setup, { perSenderHourlyOps: 501 });
    expect(looserOps.status).toBe(400);
    expect(looserOps.body.message).toMatch(
      /^Validation failed: perSenderHourlyOps: 501 is looser than the platform limit 500/,
    );
    expect(looserOps.body.errors).toEqual([
      {
        field: 'perSenderHourlyOps',
        message: '501 is looser than the platform limit 500; limits may only be tightened',
      },
    ]);
    const looserUsd = await patchLimits(setup, { perSenderDailyUsd: '500.000001' });
    expect(looserUsd.status).toBe(400);
    expect(looserUsd.body.message).toMatch(/^Validation failed: perSenderDailyUsd: /);
    // Nothing was written by the refused requests.
    const unchanged = await setup.app.request('/v1/paymaster/limits', { headers: setup.merchant.auth });
    expect(unchanged.body.merchant).toEqual({ ...merchantSet, ...NOT_THE_MERCHANTS });

    const cleared = await patchLimits(setup, { perSenderHourlyOps: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.merchant).toEqual({ ...merchantSet, perSenderHourlyOps: null, ...NOT_THE_MERCHANTS });
    expect(cleared.body.effective).toEqual({ ...merchantSet, perSenderHourlyOps: 500, ...PLATFORM_ONLY });

    const equalToPlatform = await patchLimits(setup, {
      perSenderHourlyOps: 500,
      perSenderDailyUsd: null,
      perClientDailyUsd: null,
    });
    expect(equalToPlatform.status).toBe(200);
    expect(equalToPlatform.body.effective).toEqual({
      ...merchantSet,
      perSenderHourlyOps: 500,
      perSenderDailyUsd: '500',
      perClientDailyUsd: null,
      ...PLATFORM_ONLY,
    });
  });

  it('answers 400 for malformed values and unknown keys', async () => {
    for (const body of [
      { perSenderHourlyOps: 0 },
      { perSenderHourlyOps: 1.5 },
      { perSenderHourlyOps: '10' },
      { perSenderDailyUsd: 5 },
      { perSenderDailyUsd: '0' },
      { perSenderDailyUsd: '1.1234567' },
      { perTxUsd: '-1' },
      { perTxUsd: '1000000000.000001' },
      { perMerchantDailyUsd: 0 },
      { perClientDailyUsd: '0.0000001' },
      { somethingElse: 1 },
    ]) {
      const response = await patchLimits(setup, body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body.message).toMatch(/^Validation failed: /);
    }
  });

  it('concurrent PATCHes of different limits never lose one another (one upsert of the given keys)', async () => {
    const changes: Record<string, unknown>[] = [
      { perSenderHourlyOps: 40 },
      { perSenderDailyUsd: '41' },
      { perTxUsd: '4.2' },
      { perMerchantDailyUsd: '43' },
      { perClientDailyUsd: '44' },
    ];
    for (let round = 0; round < 5; round += 1) {
      const merchant = await signInNewMerchant(setup.app);
      const answers = await Promise.all(
        changes.map((json) =>
          setup.app.request('/v1/paymaster/limits', { method: 'PATCH', headers: merchant.auth, json }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(changes.map(() => 200));
      const read = await setup.app.request('/v1/paymaster/limits', { headers: merchant.auth });
      expect(read.body.merchant).toMatchObject(Object.assign({}, ...changes));
    }
  });

  it('needs a merchant session', async () => {
    expect((await setup.app.request('/v1/paymaster/limits')).status).toBe(401);
    expect((await setup.app.request('/v1/paymaster/limits', { method: 'PATCH', json: {} })).status).toBe(401);
  });
});

describe('enforcement on the RPC', () => {
  it('adds (merchant-configured cap) only when the merchant value is the binding one', async () => {
    const setup = await setUp(
      { PAYMASTER_PLATFORM_PER_SENDER_HOURLY_OPS: '3' },
      () => new Date('2031-03-01T08:00:00Z'),
    );
    const platformBound: Address = '0x5100000000000000000000000000000000000001';
    for (let index = 0; index < 3; index++)
      expect((await call(setup, 'pm_getPaymasterData', platformBound)).result).toBeDefined();
    const platformRefusal = await call(setup, 'pm_sponsorUserOperation', platformBound);
    expect(platformRefusal.error).toEqual({
      code: -32600,
      message: `Policy denied: paymaster_rate_limit_exceeded: sender ${platformBound} reached its limit of 3 operations per hour`,
    });

    expect((await patchLimits(setup, { perSenderHourlyOps: 1 })).status).toBe(200);
    const merchantBound: Address = '0x5100000000000000000000000000000000000002';
    expect((await call(setup, 'pm_sponsorUserOperation', merchantBound)).result).toBeDefined();
    expect((await call(setup, 'pm_getPaymasterData', merchantBound)).error).toEqual({
      code: -32600,
      message: `Policy denied: paymaster_rate_limit_exceeded: sender ${merchantBound} reached its limit of 1 operations per hour (merchant-configured cap)`,
    });
    expect(await latestUsageRow(setup)).toMatchObject({ status: 'denied_rate_limit', sender: merchantBound });
  });

  it('stub data never consumes, and reads a used-up window', async () => {
    const setup = await setUp({}, () => new Date('2031-03-02T08:00:00Z'));
    expect((await patchLimits(setup, { perSenderHourlyOps: 2 })).status).toBe(200);
    const sender: Address = '0x5100000000000000000000000000000000000003';
    for (let index = 0; index < 5; index++)
      expect((await call(setup, 'pm_getPaymasterStubData', sender)).result).toBeDefined();
    expect((await call(setup, 'pm_getPaymasterData', sender)).result).toBeDefined();
    expect((await call(setup, 'pm_getPaymasterData', sender)).result).toBeDefined();
    expect((await call(setup, 'pm_getPaymasterData', sender)).error.message).toMatch(
      /^Policy denied: paymaster_rate_limit_exceeded: /,
    );
    expect((await call(setup, 'pm_getPaymasterStubData', sender)).error.message).toMatch(
      /^Policy denied: paymaster_rate_limit_exceeded: /,
    );
    const counts = await setup.app.db
      .selectFrom('paymaster_usage')
      .select(['status', setup.app.db.fn.countAll<string>().as('count')])
      .where('merchant_id', '=', setup.merchant.merchantId)
      .groupBy('status')
      .execute();
    expect(Object.fromEntries(counts.map((row) => [row.status, Number(row.count)]))).toEqual({
      submitted: 2,
      denied_rate_limit: 2,
    });
  });

  it('the hourly window starts again at the next UTC hour', async () => {
    const clock = manualClock('2031-03-03T10:59:59.000Z');
    const setup = await setUp({}, clock.now);
    expect((await patchLimits(setup, { perSenderHourlyOps: 1 })).status).toBe(200);
    const sender: Address = '0x5100000000000000000000000000000000000004';
    expect((await call(setup, 'pm_getPaymasterData', sender)).result).toBeDefined();
    expect((await call(setup, 'pm_getPaymasterData', sender)).error.message).toMatch(/rate_limit_exceeded/);
    clock.set('2031-03-03T11:00:00.000Z');
    expect((await call(setup, 'pm_getPaymasterData', sender)).result).toBeDefined();
    expect((await call(setup, 'pm_getPaymasterData', sender)).error.message).toMatch(/rate_limit_exceeded/);
  });

  it('the platform daily budget resets at 00:00 UTC', async () => {
    // Two operations' gas cost (3.052512 USD each, without markup); 84532 is a testnet.
    const clock = manualClock('2031-03-04T23:59:58.000Z');
    const setup = await setUp(
      {
        PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: '6.105024',
        PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000',
      },
      clock.now,
    );
    const sender: Address = '0x5100000000000000000000000000000000000005';
    expect((await call(setup, 'pm_getPaymasterData', sender)).result).toBeDefined();
    expect((await call(setup, 'pm_getPaymasterData', sender)).result).toBeDefined();
    expect((await call(setup, 'pm_getPaymasterData', sender)).error.message).toBe(
      'Policy denied: paymaster_global_cap_exceeded: the platform daily sponsorship budget for testnets is reached; it resets at 00:00 UTC, and what unsent operations hold frees up at their validUntil',
    );
    expect(await latestUsageRow(setup)).toMatchObject({ status: 'denied_global_cap' });
    clock.set('2031-03-05T00:00:00.000Z');
    expect((await call(setup, 'pm_getPaymasterData', sender)).result).toBeDefined();
  });

  it('the merchant per-transaction cap counts estimated cost plus markup', async () => {
    const setup = await setUp({}, () => new Date('2031-03-06T08:00:00Z'));
    const sender: Address = '0x5100000000000000000000000000000000000006';
    // Cost plus 10 % markup is 3.357764 USD.
    expect((await patchLimits(setup, { perTxUsd: '3.357763' })).status).toBe(200);
    expect((await call(setup, 'pm_getPaymasterData', sender)).error).toEqual({
      code: -32600,
      message:
        'Policy denied: paymaster_merchant_tx_cap_exceeded: estimated cost plus markup 3.357764 USD is above the per-transaction cap of 3.357763 USD',
    });
    expect(await latestUsageRow(setup)).toMatchObject({
      status: 'denied_merchant_limit',
      eth_usd_price: '3000.00000000',
      estimated_gas_cost_wei: '1017504000000000',
      estimated_cost_usd: '3.357764',
    });
    expect((await patchLimits(setup, { perTxUsd: '3.357764' })).status).toBe(200);
    expect((await call(setup, 'pm_getPaymasterData', sender)).result).toBeDefined();
    expect(await latestUsageRow(setup)).toMatchObject({
      status: 'submitted',
      estimated_cost_usd: '3.357764',
    });
  });
});

describe('a signing-service failure after the limits were consumed', () => {
  it('gives every consumed unit back', async () => {
    const signer = await startFakeSigner();
    try {
      const env = { SIGNER_URL: signer.url, SIGNER_SHARED_SECRET: 'fake-signer-shared-secret-0123456789' };
      const setup = await setUp(env, () => new Date('2031-03-09T08:00:00Z'));
      expect((await patchLimits(setup, { perSenderHourlyOps: 1, perSenderDailyUsd: '4' })).status).toBe(200);
      const sender: Address = '0x5100000000000000000000000000000000000009';
      signer.replyWith({ kind: 'http', status: 503, body: 'down' });
      for (let attempt = 0; attempt < 3; attempt++) {
        expect((await call(setup, 'pm_getPaymasterData', sender)).error.message).toMatch(
          /^paymaster_upstream_error: /,
        );
      }
      expect(signer.requests).toHaveLength(3);
      // Limits are consumed with the usage row once the operation is signed: a failed signature takes
      // nothing (no counter moved, no hold), so the one operation per hour is still there to take.
      const counters = await setup.app.db
        .selectFrom('paymaster_limit_counters')
        .select(['counter_key', 'used', 'held'])
        .where('counter_key', 'like', `%:${setup.merchant.merchantId}:%`)
        .execute();
      expect(counters.filter((counter) => counter.used !== '0' || String(counter.held) !== '0')).toEqual([]);
      const holds = await setup.app.db
        .selectFrom('paymaster_operation_holds')
        .select('counter_keys')
        .where(sql<boolean>`array_to_string(counter_keys, ' ') like ${`%:${setup.merchant.merchantId}:%`}`)
        .execute();
      expect(holds).toEqual([]);
      signer.replyWith({ kind: 'json-rpc-error', code: -32000, message: 'paymaster deposit too low' });
      // A signer refusal is answered as such: the limits would still take this operation.
      expect((await call(setup, 'pm_getPaymasterData', sender)).error.message).toBe(
        'paymaster deposit too low',
      );
    } finally {
      await signer.close();
    }
  });
});

describe('ETH/USD price from the chain aggregator', () => {
  const chain = () => testStack().chains.find((entry) => entry.chainId === CHAIN_ID)!;
  const wallet = () =>
    createWalletClient({
      account: privateKeyToAccount(FEED_OWNER.privateKey as Hex),
      chain: defineChain({
        id: CHAIN_ID,
        name: 'local',
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [chain().rpcUrl] } },
      }),
      transport: http(chain().rpcUrl),
    }).extend(publicActions);

  /** A feed of this file's own (the shared one stays fresh for every other test), with a pinned round. */
  async function deployFeed(answer: bigint, age: bigint): Promise<Address> {
    const client = wallet();
    const hash = await client.deployContract({
      abi: LocalPriceFeed.abi,
      bytecode: LocalPriceFeed.bytecode,
      args: [FEED_OWNER.address as Address, answer],
    });
    const { contractAddress } = await client.waitForTransactionReceipt({ hash });
    const { timestamp } = await client.getBlock({ blockTag: 'latest' });
    const set = await client.writeContract({
      address: contractAddress!,
      abi: LocalPriceFeed.abi,
      functionName: 'setRoundData',
      args: [answer, timestamp - age],
    });
    await client.waitForTransactionReceipt({ hash: set });
    return contractAddress!;
  }

  it('the shared local feed answers 3,000 USD with 8 decimals and stays fresh', async () => {
    const feed = chain().contracts.priceFeed as Address;
    const client = wallet();
    const [, answer, , updatedAt] = await client.readContract({
      address: feed,
      abi: LocalPriceFeed.abi,
      functionName: 'latestRoundData',
    });
    expect(answer).toBe(300_000_000_000n);
    expect(
      await client.readContract({ address: feed, abi: LocalPriceFeed.abi, functionName: 'decimals' }),
    ).toBe(8);
    expect(updatedAt).toBe((await client.getBlock({ blockTag: 'latest' })).timestamp);
  });

  it('only the owner sets the round', async () => {
    const client = createWalletClient({
      account: privateKeyToAccount(ANVIL_DEV_ACCOUNTS[5]!.privateKey as Hex),
      transport: http(chain().rpcUrl),
    }).extend(publicActions);
    await expect(
      client.simulateContract({
        address: chain().contracts.priceFeed as Address,
        abi: LocalPriceFeed.abi,
        functionName: 'setRoundData',
        args: [1n, 1n],
      }),
    ).rejects.toThrow(/NotOwner/);
  });

  it('prices with the configured feed and records its answer on the usage row', async () => {
    const feed = await deployFeed(2_000n * 10n ** 8n, 60n);
    const setup = await setUp(
      { [`PAYMASTER_PRICE_FEED_${CHAIN_ID}`]: feed },
      () => new Date('2031-03-07T08:00:00Z'),
    );
    expect(
      (await call(setup, 'pm_getPaymasterData', '0x5100000000000000000000000000000000000007')).result,
    ).toBeDefined();
    // 1,017,504,000,000,000 wei at 2,000 USD = 2.035008 USD; plus 10 % = 2.2385088 → 2.238509.
    expect(await latestUsageRow(setup)).toMatchObject({
      status: 'submitted',
      eth_usd_price: '2000.00000000',
      estimated_gas_cost_wei: '1017504000000000',
      estimated_cost_usd: '2.238509',
    });
  });

  it('a stale feed refuses signed sponsorship (price unavailable / tx cap unpriceable); stub data still answers', async () => {
    // Older than PAYMASTER_PRICE_MAX_AGE_SEC (3900 s by default).
    const feed = await deployFeed(3_000n * 10n ** 8n, 4_000n);
    const setup = await setUp(
      { [`PAYMASTER_PRICE_FEED_${CHAIN_ID}`]: feed },
      () => new Date('2031-03-08T08:00:00Z'),
    );
    const sender: Address = '0x5100000000000000000000000000000000000008';

    expect((await call(setup, 'pm_getPaymasterData', sender)).error).toEqual({
      code: -32600,
      message: `Policy denied: paymaster_price_unavailable: no fresh ETH/USD price on chain ${CHAIN_ID}; retry`,
    });
    expect(await latestUsageRow(setup)).toMatchObject({
      status: 'denied_price_unavailable',
      eth_usd_price: null,
    });
    expect((await call(setup, 'pm_getPaymasterStubData', sender)).result).toBeDefined();

    expect((await patchLimits(setup, { perTxUsd: '5' })).status).toBe(200);
    expect((await call(setup, 'pm_sponsorUserOperation', sender)).error).toEqual({
      code: -32600,
      message: `Policy denied: paymaster_merchant_tx_cap_unpriceable: no fresh ETH/USD price on chain ${CHAIN_ID} to check the merchant per-transaction cap; retry`,
    });
    expect(await latestUsageRow(setup)).toMatchObject({ status: 'denied_price_unavailable' });
    // Nothing was consumed by the refusals.
    const counters = await setup.app.db
      .selectFrom('paymaster_limit_counters')
      .selectAll()
      .where('counter_key', 'like', `%:${setup.merchant.merchantId}:%`)
      .execute();
    expect(counters).toEqual([]);
  });
});
