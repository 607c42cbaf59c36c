import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import productionFolders from '../../production-folders.json';

/**
 * No production function runs over 120 lines (issue 27), read with the TypeScript parser, in the server's
 * modules and the browser's (`.tsx` components of the dashboard, the pages' scripts under web/). A long
 * procedure is split into named steps that read as it does (paymaster/rpc/handlePaymasterRpc.ts is the
 * model). Route tables (one route definition after another) and activity factories that only assemble
 * named functions are the exceptions the issue allows; each allowed function is listed with its reason,
 * and the list may only shrink: a listed function that got short fails here until its entry goes.
 * Migrations are frozen history and not counted.
 */

const MAX_LINES = 120;
const root = resolve(__dirname, '../..');

/**
 * Allowed over the limit, each with the reason it may be: a route table (one route definition after
 * another, long because the contract's table is).
 * The list may only shrink.
 */
const ALLOWED_LONG = new Map([
  ['api/routes/webhooks/deliveries.ts#deliveryRoutesFor', 'route table: the webhook delivery routes'],
  ['api/routes/webhooks/endpoints.ts#endpointRoutesFor', 'route table: the webhook endpoint routes'],
  ['api/routes/billing/balance.ts#billingBalanceRoutes', 'route table: the billing balance routes'],
]);

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (name === 'migrations' || name === 'node_modules') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return '<anonymous>';
}

/** Every function, method and arrow of the production folders longer than MAX_LINES, as `file#name`. */
function longFunctions(): Map<string, number> {
  const found = new Map<string, number>();
  for (const file of productionFolders.folders.flatMap((folder) => sourceFiles(join(root, folder)))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (
        ts.isFunctionDeclaration(node) ||
        ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node) ||
        ts.isMethodDeclaration(node)
      ) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > MAX_LINES)
          found.set(`${relative(root, file)}#${nameOf(node, source)}`, last - first + 1);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe(`production functions stay within ${MAX_LINES} lines`, () => {
  const long = longFunctions();

  it('no function over the limit but those allowed, each for its stated reason', () => {
    const unlisted = [...long].filter(([key]) => !ALLOWED_LONG.has(key));
    expect(
      unlisted.map(
        ([key, lines]) => `${key} (${lines} lines): split it into named steps that read as the procedure`,
      ),
    ).toEqual([]);
  });

  it('every function allowed over the limit is still over it (the list only shrinks)', () => {
    const short = [...ALLOWED_LONG].filter(([key]) => !long.has(key));
    expect(short.map(([key, reason]) => `${key} is short now: drop its entry (${reason})`)).toEqual([]);
  });
});
