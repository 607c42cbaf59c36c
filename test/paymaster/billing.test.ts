import { randomBytes } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createBillingStatementActivities } from '../../activities/billingStatements';
import {
  chargeIncludedOperation,
  gasChargeReference,
  gasChargesBetween,
  recordReceiptAndCharge,
} from '../../db/gasCharges';
import { insertUsageRecord } from '../../db/paymasterUsage';
import { creditPrepaidBalance } from '../../db/prepaidLedger';
import type { TestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { extractPdfText } from '../harness/pdfText';
import { receiptWorld } from './receiptWorld';
import { ENTRY_POINTS, newAccountOn } from './smartAccounts';
import { usdcCall } from './sponsoredOperations';

/**
 * Gas charges: included sponsored operations on mainnets are charged to the prepaid ledger once, at
 * actualGasCost × the row's ETH/USD snapshot × (1 + markup); the balance, charges and CSV routes and the
 * month's PDF statement show them to their merchant only. Testnet operations (a real one signed by our
 * RPC, sent through Alto, included and recorded by this file's receipt tracker) are never charged.
 * The world is receipts.test.ts's (receiptWorld.ts).
 */

/**
 * Chains this file's trackers scan. Not 84532: receipts.test.ts asserts that its own tracker recorded
 * its operation there, and a second tracker on that chain would record it first.
 */
const TRACKED_CHAINS = [421614];
const FORMULA_LABEL = '=HYPERLINK("http://evil.example","click")';

const world = receiptWorld('b');
const { config, db, chainById, signedOperation, sendAndWait, waitForStatusChange } = world;

let app: TestApp;
let merchant: SignedInMerchant;
let otherMerchant: SignedInMerchant;
let clientId: string;

beforeAll(async () => {
  ({ app, merchant, clientId } = await world.start({
    trackedChainIds: TRACKED_CHAINS,
    markupBps: config.PAYMASTER_MARKUP_BPS,
    // The label is merchant-controlled text that reaches the CSV: a formula a spreadsheet would run.
    clientFields: { label: FORMULA_LABEL },
  }));
  otherMerchant = await signInNewMerchant(app);
  await creditPrepaidBalance(db, {
    merchantId: merchant.merchantId,
    amountUsd: '100',
    description: 'test top-up',
  });
}, 120_000);

afterAll(() => world.stop());

const MARKUP_BPS = BigInt(config.PAYMASTER_MARKUP_BPS);

/** The charge, recomputed here from first principles: ceil(wei × USD/ETH × (1 + bps/10^4)) in micro-dollars. */
function expectedChargeMicro(actualGasCostWei: string, ethUsdPrice: string): bigint {
  const [whole, fraction] = ethUsdPrice.split('.');
  expect(fraction).toHaveLength(8);
  const numerator =
    BigInt(actualGasCostWei) * BigInt(`${whole}${fraction}`) * (10_000n + MARKUP_BPS) * 10n ** 6n;
  const denominator = 10n ** 18n * 10n ** 8n * 10_000n;
  return (numerator + denominator - 1n) / denominator;
}

const fixed6 = (micro: bigint) =>
  `${micro < 0n ? '-' : ''}${(micro < 0n ? -micro : micro) / 1_000_000n}.${((micro < 0n ? -micro : micro) % 1_000_000n).toString().padStart(6, '0')}`;

const chargesOf = (usageId: string) =>
  db.selectFrom('gas_charges').selectAll().where('usage_id', '=', usageId).execute();
const ledgerDebitsOf = (usageId: string) =>
  db
    .selectFrom('prepaid_ledger_entries')
    .selectAll()
    .where('reference', '=', gasChargeReference(usageId))
    .execute();

async function balanceOf(who: SignedInMerchant) {
  const response = await app.request('/v1/merchants/me/balance', { headers: who.auth });
  expect(response.status).toBe(200);
  return response.body;
}

/** Micro-dollars debited so far by this file's priced charges (the merchant started at 100 USD). */
let debitedMicro = 0n;
const chargedUsageIds: string[] = [];

const utcDay = (offsetDays: number) =>
  new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

describe('issue 12 finding 6: testnet operations debit the real USD balance', () => {
  it("a pmc_test_ client's included sponsored operation on a testnet is recorded, never charged, and leaves the balance alone", async () => {
    const chain = chainById(421614);
    const before = (await balanceOf(merchant)).prepaidBalanceUsd;
    const account = await newAccountOn(chain, '0.7');
    const operation = await signedOperation(
      chain,
      account,
      account.execute(chain.contracts.usdc!, 0n, usdcCall('mint', account.address, 5n)),
    );
    const inclusion = await sendAndWait(chain, '0.7', operation);
    expect(inclusion.success).toBe(true);

    // The tracker records the inclusion and charges in one transaction: once the row moved, any charge exists.
    const row = await waitForStatusChange(inclusion.userOpHash, chain);
    expect(row).toMatchObject({ status: 'onchain_success', mode: 'sponsored', chain_id: 421614 });
    expect(await chargesOf(row.id)).toEqual([]);
    expect(await ledgerDebitsOf(row.id)).toEqual([]);
    expect((await balanceOf(merchant)).prepaidBalanceUsd).toBe(before);
    // Charging it directly (as a rescan would) charges nothing either.
    const direct = await db.transaction().execute((trx) =>
      chargeIncludedOperation(trx, {
        chainId: chain.chainId,
        entryPoint: ENTRY_POINTS['0.7'],
        userOpHash: inclusion.userOpHash,
        markupBps: config.PAYMASTER_MARKUP_BPS,
      }),
    );
    expect(direct).toBe(0);
    expect((await balanceOf(merchant)).prepaidBalanceUsd).toBe(before);
  });
});

/**
 * An operation of the merchant's client on a mainnet, as the RPC records it once signed (a `submitted`
 * row with the ETH/USD snapshot it was priced at), then included: the tracker's step for its
 * UserOperationEvent. The local chains are testnets, so mainnet inclusions are fed to the same step the
 * tracker runs (`recordReceiptAndCharge`) with the event's figures.
 */
async function includedMainnetOperation({
  chainId,
  success = true,
  actualGasCost,
  ethUsdPrice = '3000.00000000',
  mode = 'sponsored',
}: {
  chainId: number;
  success?: boolean;
  actualGasCost: bigint;
  ethUsdPrice?: string | null;
  mode?: 'sponsored' | 'user_paid';
}) {
  const userOpHash = `0x${randomBytes(32).toString('hex')}`;
  const usage = await insertUsageRecord(db, {
    merchantId: merchant.merchantId,
    clientId,
    method: 'pm_getPaymasterData',
    chainId,
    mode,
    status: 'submitted',
    reason: null,
    sender: privateKeyToAccount(generatePrivateKey()).address.toLowerCase(),
    entryPoint: ENTRY_POINTS['0.8'].toLowerCase(),
    userOpHash,
    targets: [],
    ...(ethUsdPrice !== null && {
      usdSnapshot: { ethUsdPrice, estimatedGasCostWei: '1', estimatedCostUsd: '0.000001' },
    }),
  });
  const receipt = {
    chainId,
    entryPoint: ENTRY_POINTS['0.8'],
    userOpHash,
    success,
    actualGasCost,
    actualGasUsed: 100_000n,
    txHash: `0x${randomBytes(32).toString('hex')}`,
    blockNumber: 1n,
  };
  const outcome = await recordReceiptAndCharge(db, receipt, config.PAYMASTER_MARKUP_BPS);
  expect(outcome.recorded).toBe(1);
  return { usage, receipt, charged: outcome.charged };
}

describe('gas charges', () => {
  it('charges an included sponsored operation on a mainnet exactly actualGasCost × price × (1 + markup), once, and the balance drops by it', async () => {
    const { usage, receipt, charged } = await includedMainnetOperation({
      chainId: 8453,
      actualGasCost: 123_456_789_012_345n,
      ethUsdPrice: '3123.45678901',
    });
    expect(charged).toBe(1);
    const expected = expectedChargeMicro(receipt.actualGasCost.toString(), '3123.45678901');
    expect(expected).toBeGreaterThan(0n);
    expect(await chargesOf(usage.id)).toEqual([
      expect.objectContaining({
        merchant_id: merchant.merchantId,
        chain_id: 8453,
        user_op_hash: receipt.userOpHash,
        tx_hash: receipt.txHash,
        operation_status: 'onchain_success',
        actual_gas_cost_wei: receipt.actualGasCost.toString(),
        eth_usd_price: '3123.45678901',
        markup_bps: config.PAYMASTER_MARKUP_BPS,
        amount_usd: fixed6(expected),
      }),
    ]);
    const [debit, ...more] = await ledgerDebitsOf(usage.id);
    expect(more).toHaveLength(0);
    expect(debit).toMatchObject({
      merchant_id: merchant.merchantId,
      direction: 'debit',
      amount_usd: fixed6(expected),
    });
    debitedMicro += expected;
    chargedUsageIds.push(usage.id);
    expect((await balanceOf(merchant)).prepaidBalanceUsd).toBe(fixed6(100_000_000n - debitedMicro));

    // A rescan of the event (a second tracker, as after a restart) charges nothing more...
    expect(await recordReceiptAndCharge(db, receipt, config.PAYMASTER_MARKUP_BPS)).toEqual({
      recorded: 0,
      charged: 0,
    });
    // ...and neither does charging the operation directly, even concurrently.
    const direct = await Promise.all(
      [1, 2, 3].map(() =>
        db.transaction().execute((trx) =>
          chargeIncludedOperation(trx, {
            chainId: 8453,
            entryPoint: ENTRY_POINTS['0.8'],
            userOpHash: receipt.userOpHash,
            markupBps: config.PAYMASTER_MARKUP_BPS,
          }),
        ),
      ),
    );
    expect(direct).toEqual([0, 0, 0]);
    expect(await chargesOf(usage.id)).toHaveLength(1);
    expect(await ledgerDebitsOf(usage.id)).toHaveLength(1);
    expect((await balanceOf(merchant)).prepaidBalanceUsd).toBe(fixed6(100_000_000n - debitedMicro));
  });

  it('still bills an included operation whose batch reverts', async () => {
    const { usage, receipt, charged } = await includedMainnetOperation({
      chainId: 42161,
      success: false,
      actualGasCost: 98_765_432_100_000n,
    });
    expect(charged).toBe(1);
    const row = await db
      .selectFrom('paymaster_usage')
      .selectAll()
      .where('id', '=', usage.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('onchain_reverted');
    const expected = expectedChargeMicro(receipt.actualGasCost.toString(), '3000.00000000');
    expect(await chargesOf(usage.id)).toEqual([
      expect.objectContaining({
        operation_status: 'onchain_reverted',
        chain_id: 42161,
        actual_gas_cost_wei: receipt.actualGasCost.toString(),
        amount_usd: fixed6(expected),
      }),
    ]);
    expect(await ledgerDebitsOf(usage.id)).toHaveLength(1);
    debitedMicro += expected;
    chargedUsageIds.push(usage.id);
    expect((await balanceOf(merchant)).prepaidBalanceUsd).toBe(fixed6(100_000_000n - debitedMicro));
  });

  it('records an operation without a price snapshot as an unpriced charge (nothing debited) and never charges user_paid operations', async () => {
    const before = (await balanceOf(merchant)).prepaidBalanceUsd;
    const unpriced = await includedMainnetOperation({
      chainId: 8453,
      actualGasCost: 123_456_789_000_000n,
      ethUsdPrice: null,
    });
    expect(unpriced.charged).toBe(1);
    expect(await chargesOf(unpriced.usage.id)).toEqual([
      expect.objectContaining({
        actual_gas_cost_wei: '123456789000000',
        eth_usd_price: null,
        amount_usd: null,
        markup_bps: config.PAYMASTER_MARKUP_BPS,
      }),
    ]);
    expect(await ledgerDebitsOf(unpriced.usage.id)).toHaveLength(0);

    const userPaid = await includedMainnetOperation({
      chainId: 8453,
      actualGasCost: 123_456_789_000_000n,
      mode: 'user_paid',
    });
    expect(userPaid.charged).toBe(0);
    expect(await chargesOf(userPaid.usage.id)).toHaveLength(0);
    expect((await balanceOf(merchant)).prepaidBalanceUsd).toBe(before);
    chargedUsageIds.push(unpriced.usage.id);
  });

  it('summarises the balance and the current UTC month', async () => {
    const summary = await balanceOf(merchant);
    const now = new Date();
    expect(summary).toEqual({
      prepaidBalanceUsd: fixed6(100_000_000n - debitedMicro),
      markupBps: config.PAYMASTER_MARKUP_BPS,
      currentPeriod: {
        start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
        end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
        chargesUsd: fixed6(debitedMicro),
        operations: 3,
      },
    });
  });

  it('lists charges newest first, cursor-paged and filtered by chain', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=1&cursor=${cursor}` : '?limit=1';
      const page = await app.request(`/v1/merchants/me/balance/charges${query}`, { headers: merchant.auth });
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(1);
      seen.push(page.body.data[0].usageId);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...chargedUsageIds].reverse());

    const all = await app.request('/v1/merchants/me/balance/charges', { headers: merchant.auth });
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.data[2]).toMatchObject({
      usageId: chargedUsageIds[0],
      chainId: 8453,
      clientId,
      clientLabel: FORMULA_LABEL,
      operationStatus: 'onchain_success',
      markupBps: config.PAYMASTER_MARKUP_BPS,
    });
    expect(all.body.data[2].amountUsd).toMatch(/^\d+\.\d{6}$/);

    const arbitrum = await app.request('/v1/merchants/me/balance/charges?chainId=42161', {
      headers: merchant.auth,
    });
    expect(arbitrum.body.data.map((item: { usageId: string }) => item.usageId)).toEqual([chargedUsageIds[1]]);

    for (const bad of ['limit=0', 'limit=101', 'cursor=nonsense', 'chainId=abc']) {
      const response = await app.request(`/v1/merchants/me/balance/charges?${bad}`, {
        headers: merchant.auth,
      });
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/^Validation failed: /);
    }
  });

  it('exports the charges of a UTC date range as CSV, oldest first, with formulas neutralised', async () => {
    const response = await app.request(
      `/v1/merchants/me/balance/charges.csv?from=${utcDay(-1)}&to=${utcDay(1)}`,
      {
        headers: merchant.auth,
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    const records: Record<string, string>[] = parse(response.text, { columns: true });
    expect(records.map((record) => record.charge_id)).toHaveLength(3);
    const listed = await app.request('/v1/merchants/me/balance/charges', { headers: merchant.auth });
    expect(records.map((record) => record.charge_id)).toEqual(
      listed.body.data.map((item: { id: string }) => item.id).reverse(),
    );
    expect(records[0]).toMatchObject({
      chain_id: '8453',
      client_id: clientId,
      client_label: `'${FORMULA_LABEL}`,
      operation_status: 'onchain_success',
      amount_usd: listed.body.data[2].amountUsd,
      actual_gas_cost_wei: listed.body.data[2].actualGasCostWei,
      eth_usd_price: listed.body.data[2].ethUsdPrice,
    });
    expect(records[2]).toMatchObject({ eth_usd_price: '', amount_usd: '' });
    // The export is streamed by keyset pages: pages of one charge read the same rows in the same order.
    const pages: string[][] = [];
    for await (const page of gasChargesBetween(
      db,
      {
        merchantId: merchant.merchantId,
        from: new Date(`${utcDay(-1)}T00:00:00Z`),
        toExclusive: new Date(`${utcDay(2)}T00:00:00Z`),
      },
      1,
    ))
      pages.push(page.map((charge) => charge.id));
    expect(pages).toEqual(records.map((record) => [record.charge_id]));

    const arbitrumCsv = await app.request(
      `/v1/merchants/me/balance/charges.csv?from=${utcDay(0)}&to=${utcDay(0)}&chainId=42161`,
      { headers: merchant.auth },
    );
    expect(
      (parse(arbitrumCsv.text, { columns: true }) as Record<string, string>[]).map(
        (record) => record.chain_id,
      ),
    ).toEqual(['42161']);

    // The header row alone when nothing falls in the range (the range is inclusive of whole UTC days).
    const empty = await app.request(`/v1/merchants/me/balance/charges.csv?from=2020-01-01&to=2020-01-31`, {
      headers: merchant.auth,
    });
    expect(empty.status).toBe(200);
    expect(parse(empty.text)).toEqual([
      [
        'created_at',
        'charge_id',
        'chain_id',
        'client_id',
        'client_label',
        'user_op_hash',
        'tx_hash',
        'operation_status',
        'actual_gas_cost_wei',
        'eth_usd_price',
        'markup_bps',
        'amount_usd',
      ],
    ]);
  });

  it.each([
    ['', 'from'],
    [`from=${utcDay(0)}`, 'to'],
    [`to=${utcDay(0)}`, 'from'],
    ['from=2026-02-30&to=2026-03-01', 'from'],
    ['from=2026/01/01&to=2026-01-02', 'from'],
    ['from=2026-01-01&to=26-01-02', 'to'],
    ['from=2026-01-02&to=2026-01-01', 'from'],
    // At most 366 days, both ends included.
    ['from=2025-01-01&to=2026-01-02', 'to: the range may span at most 366 days'],
    ['from=2000-01-01&to=2099-12-31', 'to: the range may span at most 366 days'],
  ])('answers 400 for CSV dates %j', async (query, field) => {
    const response = await app.request(`/v1/merchants/me/balance/charges.csv?${query}`, {
      headers: merchant.auth,
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(response.body.message).toMatch(new RegExp(`^Validation failed: .*${field}`));
  });

  it('serves a CSV of exactly 366 days (a leap year, both ends included)', async () => {
    const response = await app.request('/v1/merchants/me/balance/charges.csv?from=2028-01-01&to=2028-12-31', {
      headers: merchant.auth,
    });
    expect(response.status).toBe(200);
    expect(response.text.split('\n')[0]).toContain('amount_usd');
  });

  it("states the month on a PDF statement whose totals are the ledger's and the charges'", async () => {
    const now = new Date();
    const month = now.toISOString().slice(0, 7);
    // The month closes on an injected clock; the statement is made from what the trackers charged today.
    const nextMonthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const statements = createBillingStatementActivities({ db, now: () => nextMonthStart });
    expect(await statements.generateMonthlyStatement({ merchantId: merchant.merchantId, month })).toBe(
      'generated',
    );

    const response = await fetch(`${app.baseUrl}/v1/merchants/me/balance/statement.pdf?month=${month}`, {
      headers: merchant.auth,
    });
    expect(response.status).toBe(200);
    const lines = (await extractPdfText(new Uint8Array(await response.arrayBuffer()))).text.split('\n');

    const ledgerEntries = await db
      .selectFrom('prepaid_ledger_entries')
      .select(['direction', 'amount_usd'])
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    const charges = (await app.request('/v1/merchants/me/balance/charges', { headers: merchant.auth })).body
      .data as { chainId: number; amountUsd: string | null }[];
    const byChain = [8453, 42161].map((chainId) => {
      const ofChain = charges.filter((charge) => charge.chainId === chainId);
      const micro = ofChain.reduce(
        (sum, charge) => sum + BigInt((charge.amountUsd ?? '0').replace('.', '')),
        0n,
      );
      const unpriced = ofChain.filter((charge) => charge.amountUsd === null).length;
      return `${chainId === 8453 ? 'Base' : 'Arbitrum'} (${chainId}) ${ofChain.length} ${unpriced} ${fixed6(micro)}`;
    });
    expect(lines).toEqual(
      expect.arrayContaining([
        `StablePay prepaid gas statement ${month}`,
        `Merchant id ${merchant.merchantId}`,
        'Opening balance (USD) 0.000000',
        'Top-ups (USD) 100.000000',
        `Gas charges (USD) ${fixed6(debitedMicro)}`,
        `Closing balance (USD) ${(await balanceOf(merchant)).prepaidBalanceUsd}`,
        `Entries this month ${ledgerEntries.length}`,
        ...byChain,
      ]),
    );
    expect(ledgerEntries.filter((entry) => entry.direction === 'debit')).toHaveLength(
      charges.filter((charge) => charge.amountUsd !== null).length,
    );

    // Another merchant gets only its own (empty) month, never this one's.
    expect(await statements.generateMonthlyStatement({ merchantId: otherMerchant.merchantId, month })).toBe(
      'generated',
    );
    const other = await fetch(`${app.baseUrl}/v1/merchants/me/balance/statement.pdf?month=${month}`, {
      headers: otherMerchant.auth,
    });
    const otherLines = (await extractPdfText(new Uint8Array(await other.arrayBuffer()))).text.split('\n');
    expect(otherLines).toEqual(
      expect.arrayContaining([`Merchant id ${otherMerchant.merchantId}`, 'Closing balance (USD) 0.000000']),
    );
    expect(otherLines.join('\n')).not.toContain(merchant.merchantId);
  });

  it("keeps each merchant's charges and balance to itself", async () => {
    expect(await balanceOf(otherMerchant)).toMatchObject({
      prepaidBalanceUsd: '0.000000',
      currentPeriod: { chargesUsd: '0.000000', operations: 0 },
    });
    const list = await app.request('/v1/merchants/me/balance/charges', { headers: otherMerchant.auth });
    expect(list.body).toEqual({ data: [], nextCursor: null });
    // A cursor of another merchant's list pages nothing of theirs.
    const page = await app.request('/v1/merchants/me/balance/charges?limit=1', { headers: merchant.auth });
    const foreign = await app.request(`/v1/merchants/me/balance/charges?cursor=${page.body.nextCursor}`, {
      headers: otherMerchant.auth,
    });
    expect(foreign.body).toEqual({ data: [], nextCursor: null });
    const csv = await app.request(`/v1/merchants/me/balance/charges.csv?from=${utcDay(-1)}&to=${utcDay(1)}`, {
      headers: otherMerchant.auth,
    });
    expect(parse(csv.text)).toHaveLength(1);
    const anonymous = await app.request('/v1/merchants/me/balance');
    expect(anonymous.status).toBe(401);
  });
});
