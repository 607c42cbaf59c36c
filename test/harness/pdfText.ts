import { spawn } from 'node:child_process';

const EXTRACTOR = require.resolve('./extractPdfText.mjs');

export interface PdfText {
  pages: number;
  /** The text of every page, as pdf.js extracts it (one line per visual line). */
  text: string;
}

/** Extracts a PDF's text with pdf-parse in a child node process; rejects if the bytes are not a PDF. */
export function extractPdfText(pdf: Uint8Array): Promise<PdfText> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [EXTRACTOR], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0)
        reject(
          new Error(`pdf text extraction failed (exit ${code}): ${Buffer.concat(err).toString('utf8')}`),
        );
      else resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as PdfText);
    });
    child.stdin.end(Buffer.from(pdf));
  });
}
