import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README and docs/ stand alone on a fresh clone: every relative link lands on a file of this
 * repository, and nothing points to documents outside it (such as a sibling `../shared/` folder).
 */
const root = resolve(__dirname, '..');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('README and docs stand alone', () => {
  it.each(documents)('%s links only to files inside the repository', (document) => {
    const text = readFileSync(join(root, document), 'utf8');
    const problems: string[] = [];
    if (/\.\.\/shared|shared\/(SPEC|DESIGN)/.test(text))
      problems.push('names a document outside the repository');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!) || target!.startsWith('#')) continue;
      const file = resolve(dirname(join(root, document)), target!.split('#')[0]!);
      if (relative(root, file).startsWith('..')) problems.push(`${target} leaves the repository`);
      else if (!existsSync(file)) problems.push(`${target} does not exist`);
    }
    expect(problems).toEqual([]);
  });

  it('the README points at the service contract in docs/', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain('(docs/service-contract.md)');
  });
});
