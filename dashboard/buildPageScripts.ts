import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { toFunctionSelector, type Abi, type AbiFunction, type Hex } from 'viem';
import { ERC20_ABI, VAULT_ABI } from '../web/yield/client/vaultAbi';
import { buildUnlessUnchanged, filesUnder } from './buildStamp';

/**
 * Bundles the checkout page's, the yield site's, the refund claim page's and the subscribe page's scripts
 * (TypeScript under web/checkout/client/, web/yield/client/, web/refundClaim/client/ and web/subscribe/client/) with Vite into `web/dist/`, one self-contained IIFE each: the
 * pages inline them under their CSP nonce (renderCheckoutPage.ts, renderYieldSite.ts), so nothing may be
 * loaded lazily. dashboard/build.ts runs it with the dashboard; the same stamp skips an unchanged build.
 */

const root = join(__dirname, '..');
const web = join(root, 'web');
export const PAGE_SCRIPTS_OUT = join(web, 'dist');
const STAMP = join(PAGE_SCRIPTS_OUT, '.sources-hash');

/**
 * Each page script: its entry module, the file the page reads (web/pageScript.ts), and the contract
 * functions it calls, whose selectors it receives as `__FUNCTION_SELECTORS__` (web/yield/client/functionSelectors.ts).
 */
export const PAGE_SCRIPTS = [
  { entry: join(web, 'checkout', 'client', 'main.ts'), fileName: 'checkout.js', abis: [] },
  { entry: join(web, 'yield', 'client', 'main.ts'), fileName: 'yieldSite.js', abis: [ERC20_ABI, VAULT_ABI] },
  { entry: join(web, 'refundClaim', 'client', 'main.ts'), fileName: 'refundClaim.js', abis: [] },
  { entry: join(web, 'subscribe', 'client', 'main.ts'), fileName: 'subscribe.js', abis: [] },
  { entry: join(web, 'subscribe', 'client', 'manage.ts'), fileName: 'subscriptionManage.js', abis: [] },
] as const;

/**
 * Each function's selector by name, computed by viem here so that no page carries keccak. A name is one
 * function: two signatures under one name (an overload) fail the build.
 */
export function functionSelectors(abis: readonly Abi[]): Record<string, Hex> {
  const selectors: Record<string, Hex> = {};
  for (const item of abis.flat()) {
    if (item.type !== 'function') continue;
    const selector = toFunctionSelector(item as AbiFunction);
    if (selectors[item.name] && selectors[item.name] !== selector) {
      throw new Error(`${item.name} has two signatures: a page script calls functions by name`);
    }
    selectors[item.name] = selector;
  }
  return selectors;
}

/** Everything the bundles are made from: the client folders and the modules beside them they import. */
const sources = () => [
  ...filesUnder(join(web, 'checkout')),
  ...filesUnder(join(web, 'yield')),
  ...filesUnder(join(web, 'refundClaim')),
  ...filesUnder(join(web, 'subscribe')),
  // The subscribe page's script builds and decodes delegations with these.
  join(root, 'chain', 'delegations.ts'),
  join(root, 'chain', 'periodicTransfers.ts'),
  __filename,
  join(__dirname, 'buildStamp.ts'),
];

export async function buildPageScripts({ force = false }: { force?: boolean } = {}): Promise<void> {
  mkdirSync(PAGE_SCRIPTS_OUT, { recursive: true });
  await buildUnlessUnchanged(STAMP, sources(), force, async () => {
    const { build } = await import('vite');
    // One build per page: an IIFE bundle has a single entry.
    for (const { entry, fileName, abis } of PAGE_SCRIPTS) {
      await build({
        configFile: false,
        root: web,
        logLevel: 'warn',
        publicDir: false,
        define: { __FUNCTION_SELECTORS__: JSON.stringify(functionSelectors(abis)) },
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
