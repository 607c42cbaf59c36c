import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Builds the merchant dashboard (Preact, bundled by Vite) into `dashboard/dist/`, which the api serves
 * at `/dashboard` (api/routes/dashboard.ts). One place for the three commands: dev/bootstrap.js runs it
 * before `npm start` and `npm test`, dev/buildProduction.ts before copying it into the production
 * image. A build whose sources and lockfile are unchanged is skipped (the stamp file says which).
 */

const root = join(__dirname, '..');
export const DASHBOARD_SOURCE = join(__dirname, 'src');
export const DASHBOARD_OUT = join(__dirname, 'dist');
const STAMP = join(DASHBOARD_OUT, '.sources-hash');
/** Modules outside `src/` the bundle imports (plain data shared with the server: chain names, event types). */
const SHARED_SOURCES = [join(root, 'chain', 'networks.ts'), join(root, 'webhooks', 'eventTypes.ts')];

function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** Hash of everything the bundle is made from: the sources, the shared modules, this script and the locked packages. */
function sourcesHash(): string {
  const hash = createHash('sha256');
  for (const file of [
    ...filesUnder(DASHBOARD_SOURCE),
    ...SHARED_SOURCES,
    __filename,
    join(root, 'package-lock.json'),
  ].sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

export async function buildDashboard({ force = false }: { force?: boolean } = {}): Promise<void> {
  const hash = sourcesHash();
  if (!force && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash) return;
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
  writeFileSync(STAMP, hash);
}

if (require.main === module) {
  buildDashboard({ force: process.argv.includes('--force') }).catch((error: unknown) => {
    process.stderr.write(`dashboard build failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
