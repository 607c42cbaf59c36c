import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import productionFolders from '../../production-folders.json';

/**
 * Production code explains itself with the repository's own documents: a comment cites a docs/ page and
 * one of its headings (`docs/operations.md "Session events"`), never the design document the repository
 * does not have ("DESIGN §n"), and every heading it cites exists, so a renamed section fails here.
 */

const root = resolve(__dirname, '../..');
const SOURCE = /\.(?:ts|tsx|js|mjs)$/;
const SKIPPED = new Set(['node_modules', 'dist', 'generated']);

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return SKIPPED.has(name) ? [] : sourceFiles(path);
    return SOURCE.test(name) ? [path] : [];
  });
}

const productionFiles = productionFolders.folders.flatMap((folder) => sourceFiles(join(root, folder)));

/** The headings of a docs/ page, without their leading #s. */
function headings(page: string): Set<string> {
  const text = readFileSync(join(root, 'docs', page), 'utf8');
  return new Set([...text.matchAll(/^#+ +(.+?)\s*$/gm)].map((match) => match[1]!));
}

describe('references from production code to documents', () => {
  it('cites no "DESIGN §" section: the design document is not in the repository', () => {
    const citing = productionFiles
      .filter((file) => readFileSync(file, 'utf8').includes('DESIGN §'))
      .map((file) => relative(root, file));
    expect(citing).toEqual([]);
  });

  it('cites only docs/ headings that exist', () => {
    const pages = new Map<string, Set<string>>();
    const broken: string[] = [];
    let cited = 0;
    for (const file of productionFiles) {
      const text = readFileSync(file, 'utf8');
      for (const [, page, heading] of text.matchAll(/docs\/([\w-]+\.md) "([^"\n]+)"/g)) {
        cited += 1;
        if (!pages.has(page!)) pages.set(page!, headings(page!));
        if (!pages.get(page!)!.has(heading!))
          broken.push(`${relative(root, file)}: docs/${page} "${heading}"`);
      }
    }
    expect(broken).toEqual([]);
    // The comments cite dozens of sections: a pattern that matched none would check nothing.
    expect(cited).toBeGreaterThan(50);
  });
});
