import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createBillingStatementActivities } from '../../activities/billingStatements';
import type { Db } from '../../db/client';
import type { monthlyStatementsWorkflow } from '../../workflows';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { extractPdfText } from '../harness/pdfText';
import { startTestWorkers, type TestWorkers } from '../harness/workers';

/**
 * GET /v1/merchants/me/balance/statement.pdf and the monthly statements run, on an injected clock.
 * Each test works in a past month that no other test file touches: the run covers every merchant
 * that existed in the month, and only merchants created here are backdated into those months.
 */

let clock = new Date('2024-02-29T23:59:59.999Z');
let app: TestApp;
let workers: TestWorkers;

beforeAll(async () => {
  [app, workers] = await Promise.all([startTestApp({}, { now: () => clock }), startTestWorkers()]);
});

afterAll(async () => {
  await workers?.stop();
  await app?.close();
});

async function merchantCreatedAt(createdAt: string): Promise<SignedInMerchant> {
  const merchant = await signInNewMerchant(app);
  // created_at is insert-only in the schema types: backdating is a test-only move.
  await sql`update merchants set created_at = ${new Date(createdAt)} where id = ${merchant.merchantId}`.execute(
    app.db,
  );
  return merchant;
}

async function ledgerEntry(
  db: Db,
  merchantId: string,
  direction: 'credit' | 'debit',
  amountUsd: string,
  at: string,
  description = direction === 'credit'
    ? 'Prepaid gas top-up'
    : `Gas: user operation 0x${'ab'.repeat(32)} on chain 84532`,
): Promise<void> {
  await db
    .insertInto('prepaid_ledger_entries')
    .values({
      merchant_id: merchantId,
      direction,
      amount_usd: amountUsd,
      description,
      reference: `test:${randomBytes(6).toString('hex')}`,
      created_at: new Date(at),
    })
    .execute();
}

/** The ledger's own sum of signed amounts before `before`, computed apart from the statement code. */
async function ledgerBalanceBefore(merchantId: string, before: string): Promise<string> {
  const row = await app.db
    .selectFrom('prepaid_ledger_entries')
    .select(
      sql<string>`coalesce(sum(case when direction = 'credit' then amount_usd else -amount_usd end), 0)::numeric(20, 6)::text`.as(
        'balance',
      ),
    )
    .where('merchant_id', '=', merchantId)
    .where('created_at', '<', new Date(before))
    .executeTakeFirstOrThrow();
  return row.balance;
}

const statementOf = (merchant: SignedInMerchant, month: string) =>
  app.request(`/v1/merchants/me/balance/statement.pdf?month=${month}`, { headers: merchant.auth });

/** The statement's bytes as served (the JSON-minded `app.request` reads bodies as text). */
async function downloadStatement(merchant: SignedInMerchant, month: string) {
  const response = await fetch(`${app.baseUrl}/v1/merchants/me/balance/statement.pdf?month=${month}`, {
    headers: merchant.auth,
  });
  return {
    status: response.status,
    headers: response.headers,
    pdf: new Uint8Array(await response.arrayBuffer()),
  };
}

function runStatements(month: string) {
  return workers.client.workflow.execute<typeof monthlyStatementsWorkflow>('monthlyStatementsWorkflow', {
    taskQueue: workers.taskQueues.billing,
    workflowId: `monthly-statements-test-${randomBytes(6).toString('hex')}`,
    args: [{ month }],
  });
}

describe('monthly statements', () => {
  test.each([
    ['', 'month'],
    ['?month=2024-13', 'month: must be a UTC month YYYY-MM'],
    ['?month=2024-2', 'month: must be a UTC month YYYY-MM'],
    ['?month=2024-02-01', 'month: must be a UTC month YYYY-MM'],
    ['?month=february', 'month: must be a UTC month YYYY-MM'],
  ])('a bad month %j answers 400', async (query, message) => {
    clock = new Date('2024-02-29T23:59:59.999Z');
    const merchant = await signInNewMerchant(app);
    const response = await app.request(`/v1/merchants/me/balance/statement.pdf${query}`, {
      headers: merchant.auth,
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(response.body.message).toMatch(/^Validation failed: /);
    expect(response.body.message).toContain(message);
  });

  test('February 2024 closes at 00:00 UTC on March 1st; the run then makes a statement whose totals are the ledger', async () => {
    clock = new Date('2024-02-29T23:59:59.999Z');
    const merchant = await merchantCreatedAt('2024-01-10T09:00:00.000Z');
    const id = merchant.merchantId;
    await ledgerEntry(app.db, id, 'credit', '100.000000', '2024-01-20T12:00:00.000Z');
    await ledgerEntry(app.db, id, 'debit', '0.500000', '2024-01-31T23:59:59.999Z');
    await ledgerEntry(app.db, id, 'debit', '0.000001', '2024-02-01T00:00:00.000Z');
    await ledgerEntry(app.db, id, 'credit', '25.250000', '2024-02-14T08:30:00.000Z');
    await ledgerEntry(app.db, id, 'debit', '1.234567', '2024-02-29T23:59:59.999Z');
    await ledgerEntry(app.db, id, 'credit', '7.000000', '2024-03-01T00:00:00.000Z');

    // A millisecond before the close: not available, and the run refuses the open month.
    const early = await statementOf(merchant, '2024-02');
    expect(early.status).toBe(404);
    expect(early.body.message).toBe(
      'The statement for 2024-02 is not available yet: the month closes at 2024-03-01T00:00:00.000Z',
    );
    const activitiesAtClose = createBillingStatementActivities({ db: app.db, now: () => clock });
    await expect(
      activitiesAtClose.generateMonthlyStatement({ merchantId: id, month: '2024-02' }),
    ).rejects.toMatchObject({
      type: 'StatementMonthNotClosed',
      nonRetryable: true,
    });

    // Closed, but the run has not been yet.
    clock = new Date('2024-03-01T00:00:00.000Z');
    const pending = await statementOf(merchant, '2024-02');
    expect(pending.status).toBe(404);
    expect(pending.body.message).toMatch(
      /^No statement for 2024-02: statements are made shortly after a month closes/,
    );

    const result = await runStatements('2024-02');
    expect(result).toEqual({
      month: '2024-02',
      generated: 1,
      alreadyGenerated: 0,
      failed: 0,
      failedMerchantIds: [],
    });

    const { status, headers, pdf } = await downloadStatement(merchant, '2024-02');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('application/pdf');
    expect(headers.get('content-disposition')).toBe('attachment; filename="stablepay-statement-2024-02.pdf"');
    const lines = (await extractPdfText(pdf)).text.split('\n');

    const opening = await ledgerBalanceBefore(id, '2024-02-01T00:00:00.000Z');
    const closing = await ledgerBalanceBefore(id, '2024-03-01T00:00:00.000Z');
    expect([opening, closing]).toEqual(['99.500000', '123.515432']);
    expect(lines).toEqual(
      expect.arrayContaining([
        'StablePay prepaid gas statement 2024-02',
        `Merchant id ${id}`,
        `Opening balance (USD) ${opening}`,
        'Top-ups (USD) 25.250000',
        'Gas charges (USD) 1.234568',
        `Closing balance (USD) ${closing}`,
        'Entries this month 3',
        `2024-02-01 00:00 Gas: user operation 0xabababab…ababab on chain 84532 -0.000001 99.499999`,
        '2024-02-14 08:30 Prepaid gas top-up +25.250000 124.749999',
        `2024-02-29 23:59 Gas: user operation 0xabababab…ababab on chain 84532 -1.234567 ${closing}`,
      ]),
    );
    // Entries of January and of March 1st 00:00 belong to other statements.
    expect(lines.filter((line) => /^2024-0\d-\d\d \d\d:\d\d /.test(line))).toHaveLength(3);

    const stored = await app.db
      .selectFrom('billing_statements')
      .select(['opening_balance_usd', 'credits_usd', 'debits_usd', 'closing_balance_usd', 'entry_count'])
      .where('merchant_id', '=', id)
      .execute();
    expect(stored).toEqual([
      {
        opening_balance_usd: opening,
        credits_usd: '25.250000',
        debits_usd: '1.234568',
        closing_balance_usd: closing,
        entry_count: 3,
      },
    ]);

    // A second run changes nothing: the statement stays as first made, even if the ledger were touched.
    await ledgerEntry(app.db, id, 'credit', '1.000000', '2024-02-20T00:00:00.000Z');
    expect(await runStatements('2024-02')).toMatchObject({ generated: 0, failed: 0 });
    const again = await downloadStatement(merchant, '2024-02');
    expect(Buffer.from(again.pdf).equals(Buffer.from(pdf))).toBe(true);
  });

  test('merchants get statements for months they existed in, each only their own', async () => {
    clock = new Date('2023-07-01T00:15:00.000Z');
    const early = await merchantCreatedAt('2023-06-30T23:59:59.999Z');
    const late = await merchantCreatedAt('2023-07-01T00:00:00.000Z');
    await ledgerEntry(app.db, early.merchantId, 'credit', '3.000000', '2023-06-30T23:59:59.999Z');

    expect(await runStatements('2023-06')).toMatchObject({ month: '2023-06', generated: 1, failed: 0 });
    expect((await statementOf(early, '2023-06')).status).toBe(200);
    // The late merchant's account did not exist in June: no statement, and never the other merchant's.
    const other = await statementOf(late, '2023-06');
    expect(other.status).toBe(404);
    expect(other.body.message).toMatch(/^No statement for 2023-06/);
    // A merchant deleted while the run walks the list gets nothing (and no error).
    const statements = createBillingStatementActivities({ db: app.db, now: () => clock });
    expect(await statements.generateMonthlyStatement({ merchantId: randomUUID(), month: '2023-06' })).toBe(
      'merchant-deleted',
    );
  });

  test('a month with more entries than the limit lists one line per UTC day, with the same totals', async () => {
    clock = new Date('2023-10-01T00:15:00.000Z');
    const merchant = await merchantCreatedAt('2023-08-01T00:00:00.000Z');
    const id = merchant.merchantId;
    await ledgerEntry(app.db, id, 'credit', '50.000000', '2023-08-15T00:00:00.000Z');
    await ledgerEntry(app.db, id, 'debit', '0.100000', '2023-09-01T00:00:00.000Z');
    await ledgerEntry(app.db, id, 'debit', '0.200000', '2023-09-01T23:59:59.999Z');
    await ledgerEntry(app.db, id, 'credit', '10.000000', '2023-09-01T12:00:00.000Z');
    await ledgerEntry(app.db, id, 'debit', '0.300000', '2023-09-30T00:00:00.000Z');
    await ledgerEntry(app.db, id, 'debit', '0.400000', '2023-09-30T23:59:59.999Z');

    const statements = createBillingStatementActivities({ db: app.db, now: () => clock, entryLimit: 4 });
    expect(await statements.generateMonthlyStatement({ merchantId: id, month: '2023-09' })).toBe('generated');
    const { status, pdf } = await downloadStatement(merchant, '2023-09');
    expect(status).toBe(200);
    const lines = (await extractPdfText(pdf)).text.split('\n');
    const closing = await ledgerBalanceBefore(id, '2023-10-01T00:00:00.000Z');
    expect(closing).toBe('59.000000');
    expect(lines).toEqual(
      expect.arrayContaining([
        'Opening balance (USD) 50.000000',
        'Top-ups (USD) 10.000000',
        'Gas charges (USD) 1.000000',
        `Closing balance (USD) ${closing}`,
        'Entries this month 5',
        'Ledger by day',
        '2023-09-01 3 10.000000 0.300000 59.700000',
        `2023-09-30 2 0.000000 0.700000 ${closing}`,
      ]),
    );
    expect(lines.some((line) => line.includes('Gas: user operation'))).toBe(false);
    expect(
      await app.db
        .selectFrom('billing_statements')
        .select(['entry_count', 'closing_balance_usd'])
        .where('merchant_id', '=', id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ entry_count: 5, closing_balance_usd: closing });
  });

  test('the run refuses a month that is not a month or has not closed, before touching any merchant', async () => {
    await expect(runStatements('2024-13')).rejects.toMatchObject({
      cause: { cause: { type: 'InvalidStatementMonth' } },
    });
    const nextYear = `${new Date().getUTCFullYear() + 1}-01`;
    await expect(runStatements(nextYear)).rejects.toMatchObject({
      cause: { cause: { type: 'StatementMonthNotClosed' } },
    });
  });
});
