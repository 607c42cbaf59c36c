import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Skip-when-unchanged for the browser builds (dashboard/build.ts, dashboard/buildPageScripts.ts): a build
 * writes the hash of everything it was made from into a stamp file, and runs again only when that hash
 * changes.
 */

const root = join(__dirname, '..');

export function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** Hash of the given files (paths and contents) and the locked packages. */
export function sourcesHash(files: string[]): string {
  const hash = createHash('sha256');
  for (const file of [...files, join(root, 'package-lock.json')].sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** Runs `build` unless the stamp says these sources were built already, then writes the stamp. */
export async function buildUnlessUnchanged(
  stamp: string,
  sources: string[],
  force: boolean,
  build: () => Promise<void>,
): Promise<void> {
  const hash = sourcesHash(sources);
  if (!force && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return;
  await build();
  writeFileSync(stamp, hash);
}
