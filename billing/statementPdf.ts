import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import { networkByChainId } from '../config/networks';
import type { StatementLedger } from '../db/billingStatements';
import type { StatementMonth } from './statementMonth';

/**
 * The monthly prepaid-gas statement as a PDF (A4 portrait): who, which month, the summary (opening
 * balance, top-ups, gas charges, closing balance), gas charges per network, then every ledger entry of
 * the month (signed amount, running balance) or, for a month with more than STATEMENT_ENTRY_LIMIT of them,
 * per-day totals, paginated with the table header repeated. Amounts are printed
 * exactly as the ledger holds them (decimal strings, 6 fractional digits), never recomputed here.
 */

export interface StatementMerchant {
  id: string;
  walletAddress: string;
  name: string | null;
  email: string | null;
}

export interface StatementDocumentInput {
  month: StatementMonth;
  merchant: StatementMerchant;
  ledger: StatementLedger;
  generatedAt: Date;
}

const PAGE = { width: 595.28, height: 841.89 };
const MARGIN = 48;
const BODY_SIZE = 10;
const TABLE_SIZE = 8;
const ROW_HEIGHT = 12;
const GREY = rgb(0.4, 0.4, 0.4);

/** Text columns are cut with an ellipsis; amount columns are right-aligned and never cut (the font shrinks). */
interface Column {
  title: string;
  width: number;
  kind: 'text' | 'amount';
}

const ENTRY_COLUMNS: Column[] = [
  { title: 'Date (UTC)', width: 70, kind: 'text' },
  { title: 'Description', width: 257.28, kind: 'text' },
  { title: 'Amount (USD)', width: 86, kind: 'amount' },
  { title: 'Balance (USD)', width: 86, kind: 'amount' },
];

const DAY_COLUMNS: Column[] = [
  { title: 'Date (UTC)', width: 100, kind: 'text' },
  { title: 'Entries', width: 70, kind: 'amount' },
  { title: 'Top-ups (USD)', width: 110, kind: 'amount' },
  { title: 'Gas charges (USD)', width: 110, kind: 'amount' },
  { title: 'Balance (USD)', width: 109.28, kind: 'amount' },
];

const CHAIN_COLUMNS: Column[] = [
  { title: 'Network', width: 200, kind: 'text' },
  { title: 'Operations', width: 100, kind: 'amount' },
  { title: 'Unpriced', width: 100, kind: 'amount' },
  { title: 'Charged (USD)', width: 99.28, kind: 'amount' },
];

const monthTitle = (month: StatementMonth) =>
  month.start.toLocaleString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const utcMinute = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')}`;
const chainName = (chainId: number) => networkByChainId(chainId)?.displayName ?? `Chain ${chainId}`;
/** Hashes in ledger descriptions shortened to fit the column (the charges CSV carries them in full). */
const abbreviateHashes = (text: string) =>
  text.replace(/0x([0-9a-fA-F]{8})[0-9a-fA-F]{16,}([0-9a-fA-F]{6})\b/g, '0x$1…$2');

/** Renders the statement; the same input always gives a document with the same text. */
export async function renderStatementPdf(input: StatementDocumentInput): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const title = `StablePay prepaid gas statement ${input.month.month}`;
  doc.setTitle(title);
  doc.setAuthor('StablePay');
  doc.setCreationDate(input.generatedAt);
  doc.setModificationDate(input.generatedAt);
  const writer = new PageWriter(doc, await doc.embedFont(StandardFonts.Helvetica), {
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
  });

  writer.line(title, { size: 16, bold: true });
  writer.line(
    `${monthTitle(input.month)}: ${input.month.start.toISOString()} to ${input.month.end.toISOString()} (end exclusive)`,
    {
      color: GREY,
    },
  );
  writer.gap(8);
  writer.pair('Merchant', input.merchant.name ?? '-');
  writer.pair('Merchant id', input.merchant.id);
  writer.pair('Wallet', input.merchant.walletAddress);
  if (input.merchant.email) writer.pair('Email', input.merchant.email);
  writer.pair('Generated', input.generatedAt.toISOString());
  writer.gap(10);

  const { ledger } = input;
  writer.line('Summary', { size: 12, bold: true });
  writer.pair('Opening balance (USD)', ledger.openingBalanceUsd);
  writer.pair('Top-ups (USD)', ledger.creditsUsd);
  writer.pair('Gas charges (USD)', ledger.debitsUsd);
  writer.pair('Closing balance (USD)', ledger.closingBalanceUsd, { bold: true });
  writer.pair('Entries this month', String(ledger.entryCount));
  writer.gap(10);

  writer.line('Gas charges by network', { size: 12, bold: true });
  if (ledger.chargesByChain.length === 0) writer.line('No gas charges this month.', { color: GREY });
  else
    writer.table(
      CHAIN_COLUMNS,
      ledger.chargesByChain.map((chain) => [
        `${chainName(chain.chainId)} (${chain.chainId})`,
        String(chain.operations),
        String(chain.unpricedOperations),
        chain.amountUsd,
      ]),
    );
  writer.gap(10);

  if (ledger.days) {
    // Too many entries to list: one line per day (every entry is in the charges CSV and the ledger).
    writer.line('Ledger by day', { size: 12, bold: true });
    writer.line(
      `${ledger.entryCount} entries this month, shown as daily totals; the charges CSV lists every charge.`,
      {
        color: GREY,
      },
    );
    writer.table(
      DAY_COLUMNS,
      ledger.days.map((day) => [day.day, String(day.entries), day.creditsUsd, day.debitsUsd, day.balanceUsd]),
    );
  } else {
    writer.line('Ledger entries', { size: 12, bold: true });
    if (ledger.entries.length === 0) writer.line('No ledger entries this month.', { color: GREY });
    else
      writer.table(
        ENTRY_COLUMNS,
        ledger.entries.map((entry) => [
          utcMinute(entry.createdAt),
          abbreviateHashes(entry.description),
          `${entry.direction === 'credit' ? '+' : '-'}${entry.amountUsd}`,
          entry.balanceUsd,
        ]),
      );
  }

  writer.numberPages(`StablePay statement ${input.month.month} · ${input.merchant.id}`);
  return doc.save();
}

/** Writes lines and tables top-down, starting a new page when the next row would not fit. */
class PageWriter {
  private page: PDFPage;
  private y = PAGE.height - MARGIN;
  private readonly encodable: Set<number>;

  constructor(
    private readonly doc: PDFDocument,
    private readonly font: PDFFont,
    private readonly fonts: { bold: PDFFont },
  ) {
    this.page = doc.addPage([PAGE.width, PAGE.height]);
    this.encodable = new Set(font.getCharacterSet());
  }

  gap(points: number): void {
    this.y -= points;
  }

  line(text: string, options: { size?: number; bold?: boolean; color?: ReturnType<typeof rgb> } = {}): void {
    const size = options.size ?? BODY_SIZE;
    this.ensureRoom(size + 4);
    this.y -= size + 4;
    this.draw(text, MARGIN, {
      size,
      bold: options.bold,
      color: options.color,
      maxWidth: PAGE.width - 2 * MARGIN,
    });
  }

  /** "Label   value" with the value at a fixed column, so a text extractor keeps them on one line. */
  pair(label: string, value: string, options: { bold?: boolean } = {}): void {
    this.ensureRoom(BODY_SIZE + 4);
    this.y -= BODY_SIZE + 4;
    this.draw(label, MARGIN, { size: BODY_SIZE, maxWidth: 150 });
    this.draw(value, MARGIN + 160, {
      size: BODY_SIZE,
      bold: options.bold,
      maxWidth: PAGE.width - 2 * MARGIN - 160,
    });
  }

  table(columns: Column[], rows: string[][]): void {
    const header = () => {
      this.y -= ROW_HEIGHT;
      this.row(
        columns,
        columns.map((column) => column.title),
        true,
      );
      this.page.drawLine({
        start: { x: MARGIN, y: this.y - 3 },
        end: { x: PAGE.width - MARGIN, y: this.y - 3 },
        thickness: 0.5,
        color: GREY,
      });
    };
    this.ensureRoom(ROW_HEIGHT * 2);
    header();
    for (const cells of rows) {
      if (this.ensureRoom(ROW_HEIGHT)) header();
      this.y -= ROW_HEIGHT;
      this.row(columns, cells, false);
    }
  }

  /** Adds "Page n of N" and a footer to every page; call once, after the last line. */
  numberPages(footer: string): void {
    const pages = this.doc.getPages();
    pages.forEach((page, index) => {
      this.page = page;
      this.draw(`${footer} · page ${index + 1} of ${pages.length}`, MARGIN, {
        size: 7,
        color: GREY,
        y: MARGIN / 2,
        maxWidth: PAGE.width - 2 * MARGIN,
      });
    });
  }

  private row(columns: Column[], cells: string[], bold: boolean): void {
    const font = bold ? this.fonts.bold : this.font;
    let x = MARGIN;
    columns.forEach((column, index) => {
      const room = column.width - 4;
      const cell = cells[index] ?? '';
      if (column.kind === 'text') {
        this.draw(cell, x, { size: TABLE_SIZE, bold, maxWidth: room });
      } else {
        const text = this.printable(cell);
        const size = Math.min(
          TABLE_SIZE,
          (TABLE_SIZE * room) / Math.max(font.widthOfTextAtSize(text, TABLE_SIZE), 1),
        );
        this.draw(text, x + room - font.widthOfTextAtSize(text, size), { size, bold });
      }
      x += column.width;
    });
  }

  /** Starts a new page when `height` more points would run into the bottom margin; true if it did. */
  private ensureRoom(height: number): boolean {
    if (this.y - height >= MARGIN) return false;
    this.page = this.doc.addPage([PAGE.width, PAGE.height]);
    this.y = PAGE.height - MARGIN;
    return true;
  }

  private draw(
    text: string,
    x: number,
    options: { size: number; bold?: boolean; color?: ReturnType<typeof rgb>; y?: number; maxWidth?: number },
  ): void {
    const fitted =
      options.maxWidth === undefined
        ? this.printable(text)
        : this.fit(text, options.maxWidth, options.size, options.bold ?? false);
    this.page.drawText(fitted, {
      x,
      y: options.y ?? this.y,
      size: options.size,
      font: options.bold ? this.fonts.bold : this.font,
      color: options.color ?? rgb(0, 0, 0),
    });
  }

  /** The standard fonts encode WinAnsi only: anything else (a merchant name in another script) prints as "?". */
  private printable(text: string): string {
    return [...text].map((char) => (this.encodable.has(char.codePointAt(0)!) ? char : '?')).join('');
  }

  /** The text, shortened with an ellipsis when wider than `width`. */
  private fit(text: string, width: number, size: number, bold: boolean): string {
    const font = bold ? this.fonts.bold : this.font;
    let fitted = this.printable(text);
    if (font.widthOfTextAtSize(fitted, size) <= width) return fitted;
    while (fitted.length > 0 && font.widthOfTextAtSize(`${fitted}…`, size) > width)
      fitted = fitted.slice(0, -1);
    return `${fitted}…`;
  }
}
