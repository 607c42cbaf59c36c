import { join } from 'node:path';
import { buildUnlessUnchanged, filesUnder } from './buildStamp';
import { buildPageScripts } from './buildPageScripts';

/**
 * Builds the merchant dashboard (Preact, bundled by Vite) into `dashboard/dist/`, which the api serves
 * at `/dashboard` (api/routes/dashboard.ts). One place for the three commands: dev/bootstrap.js runs it
 * before `npm start` and `npm test`, dev/buildProduction.ts before copying it into the production
 * image. A build whose sources and lockfile are unchanged is skipped (the stamp file says which).
 * Run as a script it also builds the checkout page's and the yield site's scripts (buildPageScripts.ts).
 */

const root = join(__dirname, '..');
export const DASHBOARD_SOURCE = join(__dirname, 'src');
export const DASHBOARD_OUT = join(__dirname, 'dist');
const STAMP = join(DASHBOARD_OUT, '.sources-hash');
/** Modules outside `src/` the bundle imports (plain data shared with the server: chain names, event types). */
const SHARED_SOURCES = [join(root, 'config', 'networks.ts'), join(root, 'webhooks', 'eventTypes.ts')];

export async function buildDashboard({ force = false }: { force?: boolean } = {}): Promise<void> {
  const sources = [
    ...filesUnder(DASHBOARD_SOURCE),
    ...SHARED_SOURCES,
    __filename,
    join(__dirname, 'buildStamp.ts'),
  ];
  await buildUnlessUnchanged(STAMP, sources, force, async () => {
    // Vite is ESM: a dynamic import loads it once (a CommonJS require under tsx would load its chunks twice).
    const { build } = await import('vite');
    await build({
      configFile: false,
      root: __dirname,
      base: '/dashboard/',
      logLevel: 'warn',
      // Preact's automatic JSX runtime; no framework plugin is needed for a production bundle.
      esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
      build: {
        outDir: DASHBOARD_OUT,
        emptyOutDir: true,
        manifest: true,
        assetsDir: 'assets',
        target: 'es2022',
        // One script and one stylesheet, both loaded with the shell's nonce: the strict CSP has no
        // 'strict-dynamic', so a lazily imported chunk would be refused.
        modulePreload: false,
        rollupOptions: {
          input: join(DASHBOARD_SOURCE, 'main.tsx'),
          output: { inlineDynamicImports: true },
        },
      },
    });
  });
}

if (require.main === module) {
  const force = process.argv.includes('--force');
  Promise.all([buildDashboard({ force }), buildPageScripts({ force })]).catch((error: unknown) => {
    process.stderr.write(`browser build failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
