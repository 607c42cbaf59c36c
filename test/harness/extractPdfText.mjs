// Reads a PDF on stdin and prints {"pages": n, "text": "..."} on stdout: pdf-parse (pdf.js) loads its
// worker with a dynamic import, which jest's module sandbox refuses, so tests run it in a plain node.
import { PDFParse } from 'pdf-parse';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const parser = new PDFParse({ data: new Uint8Array(Buffer.concat(chunks)) });
try {
  const result = await parser.getText();
  process.stdout.write(JSON.stringify({ pages: result.total, text: result.text }));
} finally {
  await parser.destroy();
}
