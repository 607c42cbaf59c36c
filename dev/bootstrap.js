#!/usr/bin/env node
/**
 * Installs whatever a fresh clone is missing, idempotently, before `npm start` and `npm test`:
 * npm packages (when the lockfile changed), the pinned Temporal binaries, and the contract build;
 * with `test` (`npm test`) also the chromium the browser tests drive.
 * Plain JavaScript on purpose: it runs before any dependency is installed.
 */
const { createHash } = require('node:crypto');
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const root = join(__dirname, '..');

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

/**
 * The browser tests need a chromium; install Debian's package when it is missing. Without root or
 * apt-get that is impossible, so stop here with one line saying what to do, before any test runs
 * (rather than five browser tests failing at the end of a long run).
 */
function ensureChromium() {
  if (existsSync(chromiumPath)) return;
  const stop = (why) => {
    process.stderr.write(
      `bootstrap: the browser tests need chromium at ${chromiumPath} and ${why}: install it (Debian: \`apt-get install chromium\`) or set CHROMIUM_PATH to a chromium binary\n`,
    );
    process.exit(1);
  };
  if (process.env.CHROMIUM_PATH) stop('CHROMIUM_PATH names no file');
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) stop('installing it needs root');
  if (spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status !== 0) {
    stop('this machine has no apt-get');
  }
  process.stdout.write('bootstrap: installing chromium (apt-get)\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const quiet = { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env };
  const installed =
    spawnSync('apt-get', ['update', '-qq'], quiet).status === 0 &&
    spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], quiet).status === 0;
  if (!installed || !existsSync(chromiumPath)) stop('`apt-get install chromium` failed');
}

if (process.argv.includes('test')) ensureChromium();
ensureNodeModules();
const tsx = join(root, 'node_modules', '.bin', 'tsx');
run(tsx, ['dev/installTemporal.ts']);
run(tsx, ['contracts/build.ts']);
