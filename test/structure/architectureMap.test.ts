import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * docs/architecture.md maps every top-level folder of the repository: a folder added without its row in
 * the Folders table fails here, and so does a row naming a folder that is gone. Its map from the contract
 * to the code reaches each capability in one hop: every path a row names exists.
 */

const root = resolve(__dirname, '../..');
/** Not part of the repository: installed, generated or local (see .gitignore). */
const UNTRACKED = new Set(['node_modules', 'coverage', 'test-output', 'dist']);

const topLevelFolders = readdirSync(root)
  .filter((name) => !name.startsWith('.') && !UNTRACKED.has(name))
  .filter((name) => statSync(join(root, name)).isDirectory())
  .sort();

function folderTableRows(): string[] {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith('Folders\n'));
  if (!section) throw new Error('docs/architecture.md has no "## Folders" section');
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .flatMap((line) => /^\|\s*`([^`/]+)\/`\s*\|/.exec(line)?.[1] ?? [])
    .sort();
}

describe('docs/architecture.md folder table', () => {
  const rows = folderTableRows();

  it('has a row for every top-level folder', () => {
    expect(topLevelFolders.filter((folder) => !rows.includes(folder))).toEqual([]);
  });

  it('names only folders that exist', () => {
    expect(rows.filter((folder) => !topLevelFolders.includes(folder))).toEqual([]);
  });
});

/** The repository paths (`folder/file.ts`, `folder/`) the "From the contract to the code" table names. */
function contractMapPaths(): string[] {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith('From the contract to the code\n'));
  if (!section) throw new Error('docs/architecture.md has no "## From the contract to the code" section');
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .flatMap((line) =>
      [...(line.split('|')[2] ?? '').matchAll(/`([\w.-]+\/[\w./-]*)`/g)].map((match) => match[1]!),
    );
}

describe('docs/architecture.md map from the contract to the code', () => {
  const paths = contractMapPaths();

  it('names only paths that exist', () => {
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });
});
