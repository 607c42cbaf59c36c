import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import productionFolders from '../../production-folders.json';

/**
 * The module graph of the repository, server and browser (`.ts` and `.tsx`: the dashboard, the pages'
 * scripts), read with the TypeScript parser (type-only imports included):
 * it has no import cycle, and production folders never import the dev stack or the tests. The lint rule
 * in eslint.config.mjs says the second on every edit; this test holds both on every run.
 */

const root = resolve(__dirname, '../..');
const SKIPPED = new Set([
  'node_modules',
  '.git',
  '.dev',
  '.temporal',
  'artifacts',
  'test-output',
  'coverage',
]);
const PRODUCTION = productionFolders.folders;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (SKIPPED.has(name)) return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx'), base].find(
    (path) => existsSync(path) && statSync(path).isFile(),
  );
}

function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.flatMap((specifier) => resolveImport(file, specifier) ?? []);
}

const files = sourceFiles(root).filter((file) => !file.endsWith('.test.ts'));
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const name = (file: string) => relative(root, file);

/** Strongly connected components of more than one module (Tarjan), or a module importing itself. */
function cycles(): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (file: string) => {
    indices.set(file, index);
    low.set(file, index++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!indices.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, indices.get(next)!));
      }
    }
    if (low.get(file) === indices.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(name(member));
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!indices.has(file)) connect(file);
  return found;
}

describe('the import graph', () => {
  it('reads the whole tree (the check is not vacuous)', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get(join(root, 'api/main.ts'))?.length).toBeGreaterThan(3);
    // The browser modules are in it too: the dashboard's shell and the pages' script entries.
    expect(graph.get(join(root, 'dashboard/src/App.tsx'))?.length).toBeGreaterThan(3);
    expect(graph.get(join(root, 'web/yield/client/main.ts'))?.length).toBeGreaterThan(3);
  });

  it('has no import cycle, type-only imports included', () => {
    expect(cycles()).toEqual([]);
  });

  it('keeps production folders free of dev/ and test/ imports', () => {
    const offending = [...graph].flatMap(([file, imports]) =>
      PRODUCTION.some((folder) => name(file).startsWith(`${folder}/`))
        ? imports
            .filter((target) => /^(dev|test)\//.test(name(target)))
            .map((target) => `${name(file)} → ${name(target)}`)
        : [],
    );
    expect(offending).toEqual([]);
  });
});
