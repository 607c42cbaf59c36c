import { extractPdfText } from '../test/harness/pdfText';
import type { StatementLedger, StatementLedgerEntry } from '../db/billingStatements';
import { parseStatementMonth } from './statementMonth';
import { renderStatementPdf, type StatementDocumentInput } from './statementPdf';

const november = parseStatementMonth('2026-11')!;
const USER_OP_HASH = '0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef';

function statement(ledger: StatementLedger, name: string | null = 'Acme Coffee'): StatementDocumentInput {
  return {
    month: november,
    merchant: {
      id: '7d2f8c1e-0000-4000-8000-000000000001',
      walletAddress: '0x00000000000000000000000000000000000000aa',
      name,
      email: 'billing@acme.test',
    },
    generatedAt: new Date('2026-12-01T00:15:00.000Z'),
    ledger,
  };
}

const topUp = (at: string, amount: string, balance: string): StatementLedgerEntry => ({
  createdAt: new Date(at),
  direction: 'credit',
  amountUsd: amount,
  description: 'Prepaid gas top-up',
  reference: 'topup:1',
  balanceUsd: balance,
});

const gasCharge = (at: string, amount: string, balance: string): StatementLedgerEntry => ({
  createdAt: new Date(at),
  direction: 'debit',
  amountUsd: amount,
  description: `Gas: user operation ${USER_OP_HASH} on chain 84532`,
  reference: 'gas-charge:1',
  balanceUsd: balance,
});

describe('statement PDF', () => {
  test('prints the summary, charges per network and every entry with its sign and running balance', async () => {
    const pdf = await renderStatementPdf(
      statement({
        openingBalanceUsd: '-1.500000',
        creditsUsd: '25.000000',
        debitsUsd: '0.123456',
        closingBalanceUsd: '23.376544',
        entryCount: 2,
        entries: [
          topUp('2026-11-02T10:00:00.000Z', '25.000000', '23.500000'),
          gasCharge('2026-11-30T23:59:59.999Z', '0.123456', '23.376544'),
        ],
        chargesByChain: [{ chainId: 84532, operations: 2, amountUsd: '0.123456', unpricedOperations: 1 }],
      }),
    );
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    const { pages, text } = await extractPdfText(pdf);
    expect(pages).toBe(1);
    const lines = text.split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'StablePay prepaid gas statement 2026-11',
        'Merchant Acme Coffee',
        'Merchant id 7d2f8c1e-0000-4000-8000-000000000001',
        'Wallet 0x00000000000000000000000000000000000000aa',
        'Opening balance (USD) -1.500000',
        'Top-ups (USD) 25.000000',
        'Gas charges (USD) 0.123456',
        'Closing balance (USD) 23.376544',
        'Entries this month 2',
        'Base Sepolia (84532) 2 1 0.123456',
        '2026-11-02 10:00 Prepaid gas top-up +25.000000 23.500000',
        // The hash is shortened to fit; the charges CSV carries it whole.
        '2026-11-30 23:59 Gas: user operation 0x12345678…abcdef on chain 84532 -0.123456 23.376544',
        'StablePay statement 2026-11 · 7d2f8c1e-0000-4000-8000-000000000001 · page 1 of 1',
      ]),
    );
  });

  test('a long month runs over several pages with the table header on each and every entry once', async () => {
    const entries = Array.from({ length: 250 }, (_, index) =>
      gasCharge(
        new Date(november.start.getTime() + index * 60_000).toISOString(),
        '0.000001',
        `${(1000 - (index + 1) / 1e6).toFixed(6)}`,
      ),
    );
    const pdf = await renderStatementPdf(
      statement({
        openingBalanceUsd: '1000.000000',
        creditsUsd: '0.000000',
        debitsUsd: '0.000250',
        closingBalanceUsd: '999.999750',
        entryCount: 250,
        entries,
        chargesByChain: [{ chainId: 84532, operations: 250, amountUsd: '0.000250', unpricedOperations: 0 }],
      }),
    );
    const { pages, text } = await extractPdfText(pdf);
    expect(pages).toBeGreaterThan(3);
    const lines = text.split('\n');
    expect(lines.filter((line) => line === 'Date (UTC) Description Amount (USD) Balance (USD)')).toHaveLength(
      pages,
    );
    const entryLines = lines.filter((line) => line.includes('Gas: user operation'));
    expect(entryLines).toHaveLength(250);
    expect(entryLines[0]).toBe(
      '2026-11-01 00:00 Gas: user operation 0x12345678…abcdef on chain 84532 -0.000001 999.999999',
    );
    expect(entryLines[249]).toMatch(/ -0\.000001 999\.999750$/);
    for (let page = 1; page <= pages; page++)
      expect(lines).toContain(
        `StablePay statement 2026-11 · 7d2f8c1e-0000-4000-8000-000000000001 · page ${page} of ${pages}`,
      );
  });

  test('the largest amounts print whole, and a name outside the PDF fonts prints with "?"', async () => {
    const pdf = await renderStatementPdf(
      statement(
        {
          openingBalanceUsd: '-99999999999999.999999',
          creditsUsd: '1000000000.000000',
          debitsUsd: '0.000000',
          closingBalanceUsd: '-99998999999999.999999',
          entryCount: 1,
          entries: [topUp('2026-11-15T12:00:00.000Z', '1000000000.000000', '-99998999999999.999999')],
          chargesByChain: [],
        },
        'Café 東京',
      ),
    );
    const lines = (await extractPdfText(pdf)).text.split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'Merchant Café ??',
        '2026-11-15 12:00 Prepaid gas top-up +1000000000.000000 -99998999999999.999999',
        'No gas charges this month.',
      ]),
    );
  });

  test('a month without entries still states its balances', async () => {
    const pdf = await renderStatementPdf(
      statement(
        {
          openingBalanceUsd: '0.000000',
          creditsUsd: '0.000000',
          debitsUsd: '0.000000',
          closingBalanceUsd: '0.000000',
          entryCount: 0,
          entries: [],
          chargesByChain: [],
        },
        null,
      ),
    );
    const lines = (await extractPdfText(pdf)).text.split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'Merchant -',
        'Closing balance (USD) 0.000000',
        'Entries this month 0',
        'No ledger entries this month.',
      ]),
    );
  });

  test('a month with more entries than a statement lists shows one line per UTC day', async () => {
    const pdf = await renderStatementPdf(
      statement({
        openingBalanceUsd: '10.000000',
        creditsUsd: '5.000000',
        debitsUsd: '3.500000',
        closingBalanceUsd: '11.500000',
        entryCount: 9000,
        entries: [],
        days: [
          {
            day: '2026-11-01',
            entries: 4000,
            creditsUsd: '5.000000',
            debitsUsd: '1.000000',
            balanceUsd: '14.000000',
          },
          {
            day: '2026-11-30',
            entries: 5000,
            creditsUsd: '0.000000',
            debitsUsd: '2.500000',
            balanceUsd: '11.500000',
          },
        ],
        chargesByChain: [{ chainId: 84532, operations: 8999, amountUsd: '3.500000', unpricedOperations: 0 }],
      }),
    );
    const { pages, text } = await extractPdfText(pdf);
    expect(pages).toBe(1);
    expect(text.split('\n')).toEqual(
      expect.arrayContaining([
        'Entries this month 9000',
        'Ledger by day',
        '9000 entries this month, shown as daily totals; the charges CSV lists every charge.',
        'Date (UTC) Entries Top-ups (USD) Gas charges (USD) Balance (USD)',
        '2026-11-01 4000 5.000000 1.000000 14.000000',
        '2026-11-30 5000 0.000000 2.500000 11.500000',
      ]),
    );
  });
});
