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

describe('one home per concept', () => {
  it('no production module (server or browser) declares a concept’s list again outside its home', () => {
    const files = productionFolders.folders
      .flatMap((folder) => sourceFiles(join(root, folder)))
      .concat(sourceFiles(join(root, 'sdk/src')))
      .map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));
    expect(repeatedLists(files)).toEqual([]);
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
