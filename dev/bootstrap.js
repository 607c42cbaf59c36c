#!/usr/bin/env node
/**
 * Installs whatever a fresh clone is missing, idempotently, before `npm start` and `npm test`:
 * npm packages (when the lockfile changed), the pinned Temporal binaries, and the contract build.
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

ensureNodeModules();
const tsx = join(root, 'node_modules', '.bin', 'tsx');
run(tsx, ['dev/installTemporal.ts']);
run(tsx, ['contracts/build.ts']);
