import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A page's bundled script (dashboard/buildPageScripts.ts writes them into web/dist/; the production build
 * copies that folder beside this module), read once to be inlined under the page's CSP nonce.
 */
export function readPageScript(
  fileName: 'checkout.js' | 'yieldSite.js' | 'refundClaim.js' | 'subscribe.js' | 'subscriptionManage.js',
): string {
  const path = join(__dirname, 'dist', fileName);
  if (!existsSync(path)) {
    throw new Error(
      `${path} is missing: build the page scripts first (npx tsx dashboard/build.ts, run by npm start and npm test)`,
    );
  }
  const text = readFileSync(path, 'utf8');
  // Inlined verbatim: a closing tag inside would end the element early.
  if (/<\/script/i.test(text)) throw new Error(`${path} must not contain </script`);
  return text;
}
