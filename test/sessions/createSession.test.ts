import { getAddress } from 'viem';
import { predictDepositAddress } from '../../chain/depositAddress';
import { localContractsAs, writeDeploymentsFile } from '../harness/deployments';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';

interface PaymentOptionView {
  chainId: number;
  network: string;
  symbol: string;
  tokenAddress: `0x${string}`;
  decimals: number;
  amount: string;
  depositAddress: `0x${string}`;
  paymentUri: string;
}

describe('creating payment sessions', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let sk: { authorization: string };

  beforeAll(async () => {
    // Live mode needs mainnets with a factory: give chain 1 and 8453 the local contracts; 42161 has none.
    const deployments = writeDeploymentsFile([
      ...testStack().chains,
      ...localContractsAs([1, 8453]),
      ...localContractsAs([42161], ['forwarderFactory', 'forwarderImplementation']),
    ]);
    app = await startTestApp({ DEPLOYMENTS_FILE: deployments, PUBLIC_BASE_URL: 'https://pay.example' });
    merchant = await signInNewMerchant(app);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
  });
  afterAll(() => app.close());

  const create = (json: unknown, headers: Record<string, string> = sk) =>
    app.request('/v1/sessions', { method: 'POST', headers, json });

  it('answers 201 with exactly id, paymentUrl, status, expiresAt, createdAt', async () => {
    const before = Date.now();
    const response = await create({ amount: '19.99' });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual([
      'createdAt',
      'expiresAt',
      'id',
      'paymentUrl',
      'status',
    ]);
    expect(response.body.status).toBe('awaiting_payment');
    expect(response.body.paymentUrl).toBe(`https://pay.example/pay/${response.body.id}`);
    const lifetime = Date.parse(response.body.expiresAt) - Date.parse(response.body.createdAt);
    expect(lifetime).toBe(3600 * 1000);
    expect(Date.parse(response.body.createdAt)).toBeGreaterThanOrEqual(before - 5);
    expect(response.body.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('concurrent creates each write their options in the same statement and record their workflow start', async () => {
    const tag = `concurrent-creates-${Date.now()}`;
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => create({ amount: '3.5', sandboxMode: true, merchantName: tag })),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(12).fill(201));
    const ids = responses.map((response) => response.body.id as string);
    const sessions = await app.db
      .selectFrom('sessions')
      .select(['id', 'workflow_started_at'])
      .where('merchant_name', '=', tag)
      .execute();
    expect(sessions.map((row) => row.id).sort()).toEqual([...ids].sort());
    // The marks are written in groups; every session's start is recorded all the same.
    expect(sessions.every((row) => row.workflow_started_at instanceof Date)).toBe(true);
    const optionCounts = await app.db
      .selectFrom('payment_options')
      .select(['session_id', (eb) => eb.fn.countAll<string>().as('count')])
      .where('session_id', 'in', ids)
      .groupBy('session_id')
      .execute();
    const expected = (await app.request(`/v1/sessions/${ids[0]}`)).body.paymentOptions.length;
    expect(expected).toBeGreaterThan(0);
    expect(optionCounts).toHaveLength(12);
    expect(optionCounts.every((row) => Number(row.count) === expected)).toBe(true);
  });

  it('the dashboard route takes the same body with a JWT', async () => {
    const response = await app.request('/v1/merchants/me/sessions', {
      method: 'POST',
      headers: merchant.auth,
      json: { amount: '5', sandboxMode: true },
    });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual([
      'createdAt',
      'expiresAt',
      'id',
      'paymentUrl',
      'status',
    ]);
  });

  describe('validation (400, nothing written)', () => {
    it.each([
      ['amount missing', {}, /amount: /],
      ['amount a number', { amount: 10 }, /amount: must be a decimal string/],
      ['amount with 7 decimals', { amount: '1.0000001' }, /amount: must have at most 6 decimals/],
      ['amount zero', { amount: '0' }, /amount: must be greater than 0/],
      ['amount negative', { amount: '-5' }, /amount: must be a decimal string/],
      ['amount in exponent form', { amount: '1e3' }, /amount: must be a decimal string/],
      ['amount above one billion', { amount: '1000000000.01' }, /amount: must be at most 1000000000/],
      ['an unknown symbol', { amount: '1', paymentOptionSymbols: ['DAI'] }, /paymentOptionSymbols\.0: /],
      [
        'an empty symbol list',
        { amount: '1', paymentOptionSymbols: [] },
        /paymentOptionSymbols: must name at least one symbol/,
      ],
      [
        'a repeated symbol',
        { amount: '1', paymentOptionSymbols: ['USDC', 'USDC'] },
        /must not repeat a symbol/,
      ],
      ['expiresInSec below 60', { amount: '1', expiresInSec: 59 }, /expiresInSec: /],
      ['expiresInSec above 7 days', { amount: '1', expiresInSec: 604801 }, /expiresInSec: /],
      ['expiresInSec fractional', { amount: '1', expiresInSec: 100.5 }, /expiresInSec: must be an integer/],
      ['expiresInSec as a string', { amount: '1', expiresInSec: '3600' }, /expiresInSec: must be an integer/],
      [
        'successUrl over http',
        { amount: '1', successUrl: 'http://shop.example/done' },
        /successUrl: must be an absolute https URL/,
      ],
      [
        'successUrl relative',
        { amount: '1', successUrl: '/done' },
        /successUrl: must be an absolute https URL/,
      ],
      ['sandboxMode a string', { amount: '1', sandboxMode: 'true' }, /sandboxMode: must be a boolean/],
      ['sandboxMode a number', { amount: '1', sandboxMode: 1 }, /sandboxMode: must be a boolean/],
      ['a currency field', { amount: '1', currency: 'USD' }, /Unrecognized key/],
      ['a top-level chain', { amount: '1', chainId: 8453 }, /Unrecognized key/],
      [
        'a line item with a wrong total',
        { amount: '1', lineItems: [{ name: 'Tea', quantity: 2, unitPrice: '1.5', total: '2.5' }] },
        /lineItems\.0\.total: total must equal quantity × unitPrice/,
      ],
      [
        'a line item with a fractional quantity',
        { amount: '1', lineItems: [{ name: 'Tea', quantity: 1.5, unitPrice: '1', total: '1.5' }] },
        /lineItems\.0\.quantity: must be a whole number/,
      ],
      [
        'a line item without a name',
        { amount: '1', lineItems: [{ quantity: 1, unitPrice: '1', total: '1' }] },
        /lineItems\.0\.name: /,
      ],
      ['a merchantName that is empty', { amount: '1', merchantName: '' }, /merchantName: /],
    ])('%s', async (_case, json, message) => {
      const countBefore = await app.db
        .selectFrom('sessions')
        .where('merchant_id', '=', merchant.merchantId)
        .select(app.db.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      const response = await create(json);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        statusCode: 400,
        message: expect.stringMatching(message),
        error: 'Bad Request',
        errors: expect.arrayContaining([{ field: expect.any(String), message: expect.any(String) }]),
      });
      const countAfter = await app.db
        .selectFrom('sessions')
        .where('merchant_id', '=', merchant.merchantId)
        .select(app.db.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      expect(countAfter.n).toEqual(countBefore.n);
    });

    it('a body that is not an object answers 400', async () => {
      expect((await create([1, 2])).status).toBe(400);
      expect((await create('amount')).status).toBe(400);
    });
  });

  it('401 without a key, with an unknown key, or with a JWT', async () => {
    expect((await create({ amount: '1' }, {})).status).toBe(401);
    expect((await create({ amount: '1' }, { authorization: 'Bearer sk_live_unknown' })).status).toBe(401);
    expect((await create({ amount: '1' }, merchant.auth)).status).toBe(401);
  });

  describe('payment options', () => {
    async function optionsOf(json: object) {
      const created = await create(json);
      expect(created.status).toBe(201);
      const read = await app.request(`/v1/sessions/${created.body.id}`);
      expect(read.status).toBe(200);
      return {
        id: created.body.id as string,
        options: read.body.paymentOptions as PaymentOptionView[],
      };
    }

    it('sandbox sessions offer the testnets only; live sessions the mainnets with a factory only', async () => {
      const sandbox = await optionsOf({ amount: '10', sandboxMode: true });
      expect([...new Set(sandbox.options.map((option) => option.network))].sort()).toEqual([
        'arbitrum-sepolia',
        'base-sepolia',
        'ethereum-sepolia',
      ]);
      expect(sandbox.options).toHaveLength(9);

      const live = await optionsOf({ amount: '10' });
      // arbitrum (42161) has tokens but no forwarder factory: left out.
      expect([...new Set(live.options.map((option) => option.network))].sort()).toEqual(['base', 'ethereum']);
      expect(live.options.map((option) => `${option.chainId}:${option.symbol}`).sort()).toEqual(
        ['1:USDC', '1:USDT', '1:USDe', '8453:USDC', '8453:USDT', '8453:USDe'].sort(),
      );
    });

    it('amounts are exact base units per token decimals, with EIP-681 URIs to the deposit address', async () => {
      const { options } = await optionsOf({
        amount: '1234.567891',
        sandboxMode: true,
        paymentOptionSymbols: ['USDC', 'USDe'],
      });
      expect(new Set(options.map((option) => option.symbol))).toEqual(new Set(['USDC', 'USDe']));
      for (const option of options) {
        const expected = option.symbol === 'USDC' ? '1234567891' : '1234567891000000000000';
        expect(option.amount).toBe(expected);
        expect(option.decimals).toBe(option.symbol === 'USDC' ? 6 : 18);
        expect(option.paymentUri).toBe(
          `ethereum:${option.tokenAddress}@${option.chainId}/transfer?address=${option.depositAddress}&uint256=${expected}`,
        );
      }
    });

    it('each (session, chain) has its own deposit address, the forwarder the factory will create for the payout address', async () => {
      const first = await optionsOf({ amount: '3', sandboxMode: true });
      const second = await optionsOf({ amount: '3', sandboxMode: true });
      const addressesOf = (options: typeof first.options) =>
        new Map(options.map((option) => [option.chainId, option.depositAddress]));
      const a = addressesOf(first.options);
      const b = addressesOf(second.options);
      expect(new Set([...a.values(), ...b.values()]).size).toBe(6);
      for (const option of first.options) {
        const chain = testStack().chains.find((entry) => entry.chainId === option.chainId)!;
        expect(option.depositAddress).toBe(
          predictDepositAddress({
            factory: chain.contracts.forwarderFactory!,
            implementation: chain.contracts.forwarderImplementation!,
            sessionId: first.id,
            chainId: option.chainId,
            merchant: getAddress(merchant.account.address),
          }),
        );
      }
    });

    it('session and options are stored together', async () => {
      const { id } = await optionsOf({ amount: '7.5', sandboxMode: true, paymentOptionSymbols: ['USDT'] });
      const rows = await app.db
        .selectFrom('payment_options')
        .selectAll()
        .where('session_id', '=', id)
        .execute();
      expect(rows.map((row) => [row.chain_id, row.symbol, row.amount]).sort()).toEqual(
        [
          [11155111, 'USDT', '7500000'],
          [421614, 'USDT', '7500000'],
          [84532, 'USDT', '7500000'],
        ].sort(),
      );
    });
  });

  describe('Idempotency-Key', () => {
    it('a retried POST with the same key and body returns the first response and creates one session', async () => {
      const key = `retry-${Date.now()}`;
      const body = { amount: '42', sandboxMode: true, merchantName: 'Idem Shop' };
      const first = await create(body, { ...sk, 'idempotency-key': key });
      const second = await create(
        { merchantName: 'Idem Shop', sandboxMode: true, amount: '42' },
        { ...sk, 'idempotency-key': key },
      );
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      const rows = await app.db
        .selectFrom('sessions')
        .select('id')
        .where('merchant_name', '=', 'Idem Shop')
        .where('merchant_id', '=', merchant.merchantId)
        .execute();
      expect(rows).toHaveLength(1);
    });

    it('the same key with a different body answers 409', async () => {
      const key = `conflict-${Date.now()}`;
      expect(
        (await create({ amount: '1', sandboxMode: true }, { ...sk, 'idempotency-key': key })).status,
      ).toBe(201);
      const response = await create({ amount: '2', sandboxMode: true }, { ...sk, 'idempotency-key': key });
      expect(response.status).toBe(409);
      expect(response.body.message).toBe('Idempotency-Key was already used with a different request body');
    });

    it('concurrent requests with one key create exactly one session', async () => {
      const key = `concurrent-${Date.now()}`;
      const responses = await Promise.all(
        Array.from({ length: 6 }, () =>
          create({ amount: '9', sandboxMode: true, merchantName: key }, { ...sk, 'idempotency-key': key }),
        ),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(6).fill(201));
      expect(new Set(responses.map((response) => response.body.id)).size).toBe(1);
      const rows = await app.db
        .selectFrom('sessions')
        .select('id')
        .where('merchant_name', '=', key)
        .execute();
      expect(rows).toHaveLength(1);
    });

    it('keys are per merchant', async () => {
      const otherMerchant = await signInNewMerchant(app);
      const otherSk = { authorization: `Bearer ${await createApiKey(app, otherMerchant)}` };
      const key = `shared-${Date.now()}`;
      const mine = await create({ amount: '1', sandboxMode: true }, { ...sk, 'idempotency-key': key });
      const theirs = await create({ amount: '1', sandboxMode: true }, { ...otherSk, 'idempotency-key': key });
      expect(theirs.status).toBe(201);
      expect(theirs.body.id).not.toBe(mine.body.id);
    });
  });
});

describe('line items with several broken fields at once', () => {
  let app: TestApp;
  let sk: { authorization: string };
  beforeAll(async () => {
    app = await startTestApp();
    sk = { authorization: `Bearer ${await createApiKey(app, await signInNewMerchant(app))}` };
  });
  afterAll(() => app.close());

  it.each([
    [{ name: 'x', quantity: 1.5, unitPrice: 'abc', total: '1' }],
    [{ name: 'x', quantity: 'two', unitPrice: '1', total: 'x' }],
    [{ name: 'x', quantity: 2, unitPrice: '1.0000001', total: '2' }],
  ])('%j answers 400, never 500', async (item) => {
    const response = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '1', sandboxMode: true, lineItems: [item] },
    });
    expect(response.status).toBe(400);
  });
});
