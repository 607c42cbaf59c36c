import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * Installs schemathesis, the contract fuzzer the hardening tests run against `/openapi.json`, from its
 * pinned PyPI release (with its dependencies) into the project-local, gitignored `.schemathesis/`
 * folder. Nothing outside the package registry is fetched and nothing is installed system-wide.
 */

const run = promisify(execFile);

export const SCHEMATHESIS_VERSION = '4.32.5';

const projectRoot = resolve(__dirname, '..');
const installRoot = join(projectRoot, '.schemathesis');
const markerFile = 'pinned-version';

export interface SchemathesisCommand {
  /** `python3`, with `args` running the CLI and `env` finding the project-local packages. */
  command: string;
  args: string[];
  env: Record<string, string>;
}

let installing: Promise<SchemathesisCommand> | undefined;

/** How to run the pinned schemathesis CLI, installing it with pip first when missing or of another version. */
export function ensureSchemathesisInstalled(): Promise<SchemathesisCommand> {
  installing ??= installUnlessPresent().catch((error: unknown) => {
    installing = undefined;
    throw error;
  });
  return installing;
}

async function installedVersion(folder: string): Promise<string | undefined> {
  return readFile(join(folder, markerFile), 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
}

async function installUnlessPresent(): Promise<SchemathesisCommand> {
  const command = {
    command: 'python3',
    args: ['-m', 'schemathesis.cli'],
    env: { PYTHONPATH: join(installRoot, 'site'), PYTHONDONTWRITEBYTECODE: '1' },
  };
  if ((await installedVersion(installRoot)) === SCHEMATHESIS_VERSION) return command;

  // A staging folder moved into place once complete: an interrupted install never looks finished.
  const staging = `${installRoot}.staging-${process.pid}-${Date.now()}`;
  await mkdir(staging, { recursive: true });
  try {
    const args = [
      '-m',
      'pip',
      'install',
      '--target',
      join(staging, 'site'),
      '--disable-pip-version-check',
      '--no-input',
      `schemathesis==${SCHEMATHESIS_VERSION}`,
    ];
    await run('python3', args, { maxBuffer: 16 * 1024 * 1024 }).catch((error: unknown) => {
      const { stderr, message } = error as { stderr?: string; message: string };
      throw new Error(`python3 ${args.join(' ')} failed:\n${stderr?.trim() || message}`, { cause: error });
    });
    await writeFile(join(staging, markerFile), `${SCHEMATHESIS_VERSION}\n`);
    if ((await installedVersion(installRoot)) !== SCHEMATHESIS_VERSION) {
      await rm(installRoot, { recursive: true, force: true });
      await rename(staging, installRoot).catch(async (error: unknown) => {
        // A concurrent installer won the race with the same pinned version: use its install.
        if ((await installedVersion(installRoot)) !== SCHEMATHESIS_VERSION) throw error;
      });
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return command;
}

if (require.main === module) {
  ensureSchemathesisInstalled().then(
    () => process.stdout.write(`schemathesis ${SCHEMATHESIS_VERSION}: ${installRoot}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
