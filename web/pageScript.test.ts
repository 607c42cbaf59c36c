import { gzipSync } from 'node:zlib';
import { readPageScript } from './pageScript';

/**
 * The pages inline their bundled scripts (web/dist/, built by jest's globalSetup as by npm start): each
 * stays within its byte budget and runs under the pages' CSP (a nonce'd inline classic script, no eval).
 */

/**
 * Raw bytes each page may inline (served uncompressed): each keeps its hand-written script's size, 8,187
 * and 16,252 bytes; the refund claim page's, written for the bundle, about twice its first size. The yield site's stays within it by taking its selectors from the build and a small
 * coder instead of viem's (docs/decisions.md).
 */
const BUDGETS = { 'checkout.js': 8_187, 'yieldSite.js': 16_252, 'refundClaim.js': 2_500 } as const;

describe.each(Object.entries(BUDGETS) as [keyof typeof BUDGETS, number][])(
  'web/dist/%s',
  (fileName, budget) => {
    const script = readPageScript(fileName);

    it(`stays within ${budget} bytes`, () => {
      const bytes = Buffer.byteLength(script);
      process.stdout.write(`${fileName}: ${bytes} bytes, ${gzipSync(script, { level: 9 }).length} gzipped\n`);
      expect(bytes).toBeLessThanOrEqual(budget);
    });

    it('is one self-contained classic script: no module syntax, no eval, no closing tag', () => {
      expect(script).not.toMatch(/^\s*(import|export)\s/m);
      expect(script).not.toMatch(/\beval\(|new Function\(/);
      expect(script).not.toMatch(/<\/script/i);
    });
  },
);
