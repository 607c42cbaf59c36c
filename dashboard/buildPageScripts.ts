import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildUnlessUnchanged, filesUnder } from './buildStamp';

/**
 * Bundles the checkout page's and the yield site's scripts (TypeScript under web/checkout/client/ and
 * web/yield/client/, viem for the ABI) with Vite into `web/dist/`, one self-contained IIFE each: the
 * pages inline them under their CSP nonce (renderCheckoutPage.ts, renderYieldSite.ts), so nothing may be
 * loaded lazily. dashboard/build.ts runs it with the dashboard; the same stamp skips an unchanged build.
 */

const root = join(__dirname, '..');
const web = join(root, 'web');
export const PAGE_SCRIPTS_OUT = join(web, 'dist');
const STAMP = join(PAGE_SCRIPTS_OUT, '.sources-hash');

/** Each page script: its entry module and the file the page reads (web/pageScript.ts). */
export const PAGE_SCRIPTS = [
  { entry: join(web, 'checkout', 'client', 'main.ts'), fileName: 'checkout.js' },
  { entry: join(web, 'yield', 'client', 'main.ts'), fileName: 'yieldSite.js' },
] as const;

/** Everything the bundles are made from: the client folders and the modules beside them they import. */
const sources = () => [
  ...filesUnder(join(web, 'checkout')),
  ...filesUnder(join(web, 'yield')),
  __filename,
  join(__dirname, 'buildStamp.ts'),
];

export async function buildPageScripts({ force = false }: { force?: boolean } = {}): Promise<void> {
  mkdirSync(PAGE_SCRIPTS_OUT, { recursive: true });
  await buildUnlessUnchanged(STAMP, sources(), force, async () => {
    const { build } = await import('vite');
    // One build per page: an IIFE bundle has a single entry.
    for (const { entry, fileName } of PAGE_SCRIPTS) {
      await build({
        configFile: false,
        root: web,
        logLevel: 'warn',
        publicDir: false,
        build: {
          outDir: PAGE_SCRIPTS_OUT,
          emptyOutDir: false,
          target: 'es2022',
          modulePreload: false,
          rollupOptions: {
            input: entry,
            output: { format: 'iife', entryFileNames: fileName, inlineDynamicImports: true },
          },
        },
      });
    }
  });
}

if (require.main === module) {
  buildPageScripts({ force: process.argv.includes('--force') }).catch((error: unknown) => {
    process.stderr.write(`page scripts build failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
