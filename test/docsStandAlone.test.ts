import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README and docs/ stand alone on a fresh clone: every relative link lands on a file of this
 * repository (and an anchor to one of its headings), nothing points to documents outside it (such as a
 * sibling `../shared/` folder), and every `npm run` script and `tsx` entrypoint they name exists.
 */
const root = resolve(__dirname, '..');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingAnchors(file: string): Set<string> {
  const anchors = new Set<string>();
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = heading!
      .replace(/`/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let repeat = 1; anchors.has(anchor); repeat += 1) anchor = `${base}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
}

describe('README and docs stand alone', () => {
  it.each(documents)('%s links only to files inside the repository', (document) => {
    const text = readFileSync(join(root, document), 'utf8');
    const problems: string[] = [];
    if (/\.\.\/shared|shared\/(SPEC|DESIGN)/.test(text))
      problems.push('names a document outside the repository');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const file = path ? resolve(dirname(join(root, document)), path) : join(root, document);
      if (relative(root, file).startsWith('..')) problems.push(`${target} leaves the repository`);
      else if (!existsSync(file)) problems.push(`${target} does not exist`);
      else if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(file).has(anchor))
        problems.push(`${target}: no heading has the anchor #${anchor}`);
    }
    expect(problems).toEqual([]);
  });

  it.each(documents)(
    '%s cites no numbered design note (the design notes are not in the repository)',
    (document) => {
      expect(readFileSync(join(root, document), 'utf8')).not.toMatch(/DESIGN §/);
    },
  );

  it.each(documents)('%s documents only npm scripts and tsx entrypoints that exist', (document) => {
    const text = readFileSync(join(root, document), 'utf8');
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: object }).scripts,
    );
    const problems: string[] = [];
    for (const [, script] of text.matchAll(/npm (?:--prefix \S+ )?run (?:--silent )?([a-z][\w:-]*)/g))
      if (!scripts.includes(script!)) problems.push(`npm run ${script} is not a script of package.json`);
    for (const [, file] of text.matchAll(/(?:npx )?tsx ([\w./-]+\.ts)\b/g))
      if (!existsSync(join(root, file!))) problems.push(`tsx ${file} names no file`);
    expect(problems).toEqual([]);
  });

  it('the README points at the service contract in docs/', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain('(docs/service-contract.md)');
  });
});
