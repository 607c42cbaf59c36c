import { cp, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { buildDashboard, DASHBOARD_OUT } from '../dashboard/build';
import { buildPageScripts, PAGE_SCRIPTS_OUT } from '../dashboard/buildPageScripts';
import productionFolders from '../production-folders.json';

/**
 * `npm run build`: compiles the production code to JavaScript in `dist/`, one file per module in the
 * same tree (so `require.resolve('../workflows')` and assets read beside a module keep working), for
 * the production image (Dockerfile) to run with `node` and production dependencies only. Tests, the
 * dev stack and benches are left out: nothing in `dist/` may need them (the lint rule and
 * test/structure/importGraph.test.ts keep production code off dev/ and test/).
 */

const root = join(__dirname, '..');
const out = join(root, 'dist');

/** Folders whose code runs in production, and the generated contract artifacts they import. */
const PRODUCTION_FOLDERS = [
  // The tool server runs on the merchant's machine from a checkout, not in the image; the dashboard is
  // browser code, shipped as its Vite bundle (below) rather than compiled for node.
  ...productionFolders.folders.filter((folder) => folder !== 'tool-server' && folder !== 'dashboard'),
  'contracts/artifacts',
];

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(folder, entry.name);
      return entry.isDirectory() ? filesUnder(path) : Promise.resolve([path]);
    }),
  );
  return nested.flat();
}

/** Deployment scripts run from a checkout (`tsx chain/deployment/main.ts`), with the dev packages they read. */
const RUN_FROM_CHECKOUT = `${join(root, 'chain', 'deployment')}/`;

/** The pages' browser modules, shipped as their bundles in web/dist/ (below) rather than compiled for node. */
const isBrowserModule = (path: string) => /\/web\/[^/]+\/client\//.test(path);

const isSource = (path: string) =>
  path.endsWith('.ts') &&
  !isBrowserModule(path) &&
  !path.endsWith('.test.ts') &&
  !path.endsWith('.d.ts') &&
  !path.startsWith(RUN_FROM_CHECKOUT);
/** Files a module reads beside itself at run time (the pages' styles); the page scripts' bundles are copied below. */
const isAsset = (path: string) =>
  /\.(css|js|html|svg|png|json)$/.test(path) &&
  !path.endsWith('.test.js') &&
  !path.startsWith(`${PAGE_SCRIPTS_OUT}/`);

async function main(): Promise<void> {
  await rm(out, { recursive: true, force: true });
  const files = (
    await Promise.all(PRODUCTION_FOLDERS.map((folder) => filesUnder(join(root, folder))))
  ).flat();
  const sources = files.filter(isSource);
  await build({
    entryPoints: sources,
    outdir: out,
    outbase: root,
    bundle: false,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    sourcemap: true,
    logLevel: 'warning',
  });
  const assets = files.filter(isAsset);
  for (const asset of assets) {
    const target = join(out, relative(root, asset));
    await mkdir(dirname(target), { recursive: true });
    await cp(asset, target);
  }
  // The dashboard's bundle, where api/routes/dashboard.ts looks for it from dist/api/routes/.
  await buildDashboard();
  await cp(DASHBOARD_OUT, join(out, 'dashboard', 'dist'), { recursive: true });
  // The pages' scripts, where web/pageScript.ts looks for them from dist/web/.
  await buildPageScripts();
  await cp(PAGE_SCRIPTS_OUT, join(out, 'web', 'dist'), { recursive: true });
  const size = (await Promise.all(sources.map((file) => stat(file)))).length;
  process.stdout.write(
    `built ${size} modules and ${assets.length} assets into ${relative(process.cwd(), out)}/\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
