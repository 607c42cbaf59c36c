import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import productionFolders from '../../production-folders.json';
import { KNOWN_CHAIN_IDS } from '../../config/networks';
import { STABLECOIN_SYMBOLS } from '../../chain/stablecoins';
import { SESSION_STATUSES } from '../../db/sessionStatus';
import { LIMIT_KEYS } from '../../paymaster/limits/limitViews';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/eventTypes';

/**
 * One home per concept (issue 45, item 3): a list the service keeps — session statuses, webhook event
 * types, stablecoin symbols, chain ids, merchant limit keys — is spelled out once, in its home module,
 * and everything else (the server, the dashboard, the pages' scripts) imports it or takes a type
 * derived from it (the SDK's generated contract). Read with the TypeScript parser: an array literal or
 * a union of literal types outside the home that holds the list again (every value, or all but one)
 * fails here. Subsets that mean something else (the steps a session's timeline shows, the statuses in
 * which a payer still pays) are not the list and pass. Migrations are frozen history and not read.
 */

interface Concept {
  name: string;
  home: string;
  values: readonly (string | number)[];
}

const CONCEPTS: Concept[] = [
  { name: 'session statuses', home: 'db/sessionStatus.ts', values: SESSION_STATUSES },
  { name: 'webhook event types', home: 'webhooks/eventTypes.ts', values: WEBHOOK_EVENT_TYPES },
  { name: 'stablecoin symbols', home: 'chain/stablecoins.ts', values: STABLECOIN_SYMBOLS },
  { name: 'chain ids', home: 'config/networks.ts', values: KNOWN_CHAIN_IDS },
  { name: 'merchant limit keys', home: 'paymaster/limits/limitViews.ts', values: LIMIT_KEYS },
];

const root = resolve(__dirname, '../..');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (['migrations', 'node_modules', 'dist', 'generated'].includes(name)) return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') && !/\.test\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The literal values of an array literal or a union type, or null when it is neither. */
function literalList(node: ts.Node): (string | number)[] | null {
  const members = ts.isArrayLiteralExpression(node)
    ? node.elements
    : ts.isUnionTypeNode(node)
      ? node.types.map((type) => (ts.isLiteralTypeNode(type) ? type.literal : type))
      : null;
  if (!members) return null;
  return members.flatMap((member): (string | number)[] =>
    ts.isStringLiteralLike(member) ? [member.text] : ts.isNumericLiteral(member) ? [Number(member.text)] : [],
  );
}

/** `file:line concept` for every list outside its home that repeats a concept's list. */
function repeatedLists(files: { path: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      const list = literalList(node);
      if (list) {
        for (const concept of CONCEPTS) {
          if (path === concept.home) continue;
          const held = concept.values.filter((value) => list.includes(value)).length;
          if (held >= Math.max(3, concept.values.length - 1)) {
            const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
            found.push(`${path}:${line} ${concept.name}`);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/**
 * Spellings with one home too: a micro-dollar scale (10^6 as a bigint, however written: `1_000_000n`,
 * `10n ** 6n`, `BigInt(1e6)`) belongs to money/ (the conversions live there: usdToMicro, microToUsd,
 * MICRO_USD_PER_USD), and a workflow or schedule id is spelled in workflows/workflowIds.ts only (a
 * `workflowId`/`scheduleId` written as a string or template, a `getHandle` of one, or a `…WorkflowId` /
 * `…_SCHEDULE_ID` declared elsewhere).
 */
interface Spelling {
  name: string;
  isHome: (path: string) => boolean;
  matches: (node: ts.Node) => boolean;
}

/** The value of a constant bigint expression (literals, `BigInt(n)`, `*` and `**`), or undefined. */
function constantBigint(node: ts.Node): bigint | undefined {
  if (ts.isParenthesizedExpression(node)) return constantBigint(node.expression);
  if (ts.isBigIntLiteral(node)) return BigInt(node.text.replace(/_/g, '').slice(0, -1));
  if (
    ts.isCallExpression(node) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === 'BigInt' &&
    node.arguments.length === 1 &&
    ts.isNumericLiteral(node.arguments[0]!)
  ) {
    const value = Number(node.arguments[0].text);
    return Number.isSafeInteger(value) ? BigInt(value) : undefined;
  }
  if (ts.isBinaryExpression(node)) {
    const [left, right] = [constantBigint(node.left), constantBigint(node.right)];
    if (left === undefined || right === undefined) return undefined;
    if (node.operatorToken.kind === ts.SyntaxKind.AsteriskAsteriskToken) return left ** right;
    if (node.operatorToken.kind === ts.SyntaxKind.AsteriskToken) return left * right;
  }
  return undefined;
}

const MICRO_USD_SCALE = 10n ** 6n;
const isSpelledString = (node: ts.Node | undefined): boolean =>
  node !== undefined &&
  (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node));

const SPELLINGS: Spelling[] = [
  {
    name: 'micro-dollar scale',
    isHome: (path) => path.startsWith('money/'),
    matches: (node) =>
      constantBigint(node) === MICRO_USD_SCALE &&
      !ts.isParenthesizedExpression(node.parent) &&
      !(ts.isBinaryExpression(node.parent) && constantBigint(node.parent) === MICRO_USD_SCALE),
  },
  {
    name: 'workflow id',
    isHome: (path) => path === 'workflows/workflowIds.ts',
    matches: (node) =>
      (ts.isPropertyAssignment(node) &&
        ts.isIdentifier(node.name) &&
        ['workflowId', 'scheduleId'].includes(node.name.text) &&
        isSpelledString(node.initializer)) ||
      (ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'getHandle' &&
        isSpelledString(node.arguments[0])) ||
      (ts.isVariableDeclaration(node) &&
        ts.isIdentifier(node.name) &&
        /(?:WorkflowId|_SCHEDULE_ID)$/.test(node.name.text) &&
        node.initializer !== undefined),
  },
];

/** `file:line spelling` for every spelling outside its home. */
function strayedSpellings(files: { path: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      for (const spelling of SPELLINGS) {
        if (!spelling.isHome(path) && spelling.matches(node)) {
          const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          found.push(`${path}:${line} ${spelling.name}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function productionFiles(): { path: string; text: string }[] {
  return productionFolders.folders
    .flatMap((folder) => sourceFiles(join(root, folder)))
    .concat(sourceFiles(join(root, 'sdk/src')))
    .map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));
}

describe('one home per concept', () => {
  it('no production module (server or browser) declares a concept’s list again outside its home', () => {
    expect(repeatedLists(productionFiles())).toEqual([]);
  });

  it('no production module scales micro-dollars or spells a workflow id outside its home', () => {
    expect(strayedSpellings(productionFiles())).toEqual([]);
  });

  it('finds a micro-dollar scale outside money/ and a workflow id outside workflowIds.ts', () => {
    const found = strayedSpellings([
      { path: 'db/copy.ts', text: 'const micro = (usd: bigint) => usd * 1_000_000n;' },
      { path: 'billing/copy.ts', text: 'const scale = 10n ** 6n;' },
      { path: 'dashboard/src/copy.ts', text: 'const scale = BigInt(1e6);' },
      { path: 'api/copy.ts', text: 'const max = 1_000_000_000n * 1_000_000n;' },
      { path: 'money/microUsd.ts', text: 'export const MICRO_USD_PER_USD = 10n ** 6n;' },
      { path: 'db/notMicro.ts', text: 'const weiPerEth = 10n ** 18n; const ops = 1_000_000;' },
      {
        path: 'workflowClient/copy.ts',
        text: 'await client.workflow.start(flow, { workflowId: `session-${id}`, taskQueue });',
      },
      { path: 'api/handle.ts', text: 'client.workflow.getHandle(`yield-domain-${id}`);' },
      {
        path: 'workflows/yieldDomainVerification.ts',
        text: 'export const yieldDomainWatchWorkflowId = (id: string) => `yield-domain-watch-${id}`;',
      },
      { path: 'workflowClient/ok.ts', text: 'start(flow, { workflowId: sessionWorkflowId(id) });' },
      {
        path: 'workflows/workflowIds.ts',
        text: 'export const sessionWorkflowId = (id: string) => `session-${id}`;',
      },
    ]);
    expect(found).toEqual([
      'db/copy.ts:1 micro-dollar scale',
      'billing/copy.ts:1 micro-dollar scale',
      'dashboard/src/copy.ts:1 micro-dollar scale',
      'api/copy.ts:1 micro-dollar scale',
      'workflowClient/copy.ts:1 workflow id',
      'api/handle.ts:1 workflow id',
      'workflows/yieldDomainVerification.ts:1 workflow id',
    ]);
  });

  it('finds a list declared twice, as an array or as a union type', () => {
    const found = repeatedLists([
      { path: 'dashboard/src/copy.ts', text: "const symbols = ['USDC', 'USDT', 'USDe'] as const;" },
      {
        path: 'web/copy.ts',
        text: "type Status = 'pending' | 'awaiting_payment' | 'confirming' | 'bridging' | 'completed' | 'failed';",
      },
      { path: 'config/copy.ts', text: 'export const ids = [1, 8453, 42161, 11155111, 84532, 421614];' },
      { path: 'dashboard/src/subset.ts', text: "const payStates = ['pending', 'awaiting_payment'];" },
      { path: 'chain/stablecoins.ts', text: "const home = ['USDC', 'USDT', 'USDe'];" },
    ]);
    expect(found).toEqual([
      'dashboard/src/copy.ts:1 stablecoin symbols',
      'web/copy.ts:1 session statuses',
      'config/copy.ts:1 chain ids',
    ]);
  });
});
