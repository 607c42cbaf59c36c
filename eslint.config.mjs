import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import productionFolders from './production-folders.json' with { type: 'json' };

const ROOT = dirname(fileURLToPath(import.meta.url));

/** Folders whose code runs in production (production-folders.json). */
const PRODUCTION_FOLDERS = productionFolders.folders;

/** Modules that run in the browser: the dashboard (Preact) and the pages' scripts (bundled by dashboard/buildPageScripts.ts). */
const BROWSER_MODULES = ['dashboard/src/**/*.{ts,tsx}', 'web/*/client/**/*.ts', 'web/*/clientData.ts'];

const NO_DEV_OR_TEST = {
  group: ['**/dev', '**/dev/**', '**/test', '**/test/**'],
  message: 'Production code must not import dev/ (local stand-ins) or test/.',
};

/**
 * The layer of each production folder, read from the "Layers" table of docs/architecture.md (the order is
 * written only there): `[layer, folders]` rows, lowest first.
 */
function layerTable() {
  const text = readFileSync(resolve(ROOT, 'docs/architecture.md'), 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith('Layers\n'));
  if (!section) throw new Error('docs/architecture.md has no "## Layers" section');
  const layers = new Map();
  for (const line of section.split('\n')) {
    const row = /^\|\s*(\d+)\s*\|([^|]*)\|/.exec(line);
    if (!row) continue;
    for (const folder of row[2].matchAll(/`([^`/]+)\/`/g)) layers.set(folder[1], Number(row[1]));
  }
  if (layers.size === 0) throw new Error('docs/architecture.md "## Layers" lists no folders');
  return layers;
}

const LAYERS = layerTable();
const TOP_LAYER = Math.max(...LAYERS.values());

/**
 * Upward imports not yet removed, `file → folder`, each with what removes it. The list may only shrink
 * (test/structure/layerOrder.test.ts fails on an entry whose file no longer imports that folder).
 */
export const KNOWN_UPWARD_IMPORTS = new Map([
  ['db/gasCharges.ts → billing', 'micro-USD conversion: goes with the money module (issue 45, item 3)'],
  ['db/gasCharges.ts → paymaster', 'micro-USD conversion: goes with the money module (issue 45, item 3)'],
  ['db/settlements.ts → billing', 'micro-USD conversion: goes with the money module (issue 45, item 3)'],
  ['db/topups.ts → billing', 'micro-USD conversion: goes with the money module (issue 45, item 3)'],
  ['db/sessionEvents.ts → billing', 'micro-USD conversion: goes with the money module (issue 45, item 3)'],
  [
    'db/yieldDeployCharges.ts → billing',
    'micro-USD conversion: goes with the money module (issue 45, item 3)',
  ],
  [
    'db/yieldDeployCharges.ts → paymaster',
    'micro-USD conversion and the prepaid counter name: money module, limit keys (item 3)',
  ],
  [
    'db/yieldDeployCharges.ts → yield',
    'the deploy charge terms: to be passed in by activities/yieldDeployments.ts',
  ],
  ['db/yieldDeployLimits.ts → yield', 'the deploy charge terms type: moves down with the charge terms'],
  ['db/events.ts → webhooks', 'the event types list: moves down with the lists from the server (item 3)'],
  ['db/sessionEvents.ts → webhooks', 'event payloads: to be serialised by the caller and passed in'],
  [
    'db/webhookDeliveries.ts → webhooks',
    'the disable-after window and the endpoint.disabled event: to be passed in',
  ],
  [
    'activities/chainMonitor.ts → workflowClient',
    'signalling the session: the worker is to pass the signaller in',
  ],
  [
    'activities/sessionEvents.ts → workflowClient',
    'starting deliveries: the worker is to pass the starter in',
  ],
  [
    'activities/sessionReconciler.ts → workflowClient',
    'starting sessions: the worker is to pass the starter in',
  ],
]);

/** `layers/import-order`: a module imports from its own layer or below; the top layer's programs never import one another. */
const importOrder = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      upward:
        '{{from}} (layer {{fromLayer}}) must not import {{to}} (layer {{toLayer}}): {{why}} (docs/architecture.md "Layers")',
    },
  },
  create(context) {
    const fromFolder = relative(ROOT, context.filename).split(/[\\/]/)[0];
    const fromLayer = LAYERS.get(fromFolder);
    if (fromLayer === undefined) return {};
    const check = (node, source) => {
      if (typeof source?.value !== 'string' || !source.value.startsWith('.')) return;
      const toFolder = relative(ROOT, resolve(dirname(context.filename), source.value)).split(/[\\/]/)[0];
      const toLayer = LAYERS.get(toFolder);
      if (toLayer === undefined || toFolder === fromFolder) return;
      if (KNOWN_UPWARD_IMPORTS.has(`${relative(ROOT, context.filename)} → ${toFolder}`)) return;
      const why =
        toLayer > fromLayer
          ? 'pass the policy in, or move the shared piece down'
          : fromLayer === TOP_LAYER && toLayer === TOP_LAYER
            ? "the programs talk over their interfaces, not through each other's modules"
            : undefined;
      if (why)
        context.report({
          node,
          messageId: 'upward',
          data: { from: `${fromFolder}/`, fromLayer, to: `${toFolder}/`, toLayer, why },
        });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source),
    };
  },
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      '.dev/',
      '.temporal/',
      'contracts/artifacts/',
      'test-output/',
      'sdk/dist/',
      // Generated by sdk/scripts/generate.ts (openapi-typescript); checked for staleness, not for style.
      'sdk/src/generated/',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Production modules never reach into the local stack's stand-ins or the tests (docs/architecture.md).
    files: PRODUCTION_FOLDERS.map((folder) => `${folder}/**/*.{ts,tsx}`),
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [NO_DEV_OR_TEST] }],
    },
  },
  {
    // Browser modules are bundled for the browser: Node's built-ins are not there (a rule here replaces
    // the one above for these files, so it says both).
    files: BROWSER_MODULES,
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            NO_DEV_OR_TEST,
            { group: ['node:*'], message: 'Browser modules cannot use Node.js built-ins.' },
          ],
        },
      ],
    },
  },
  {
    // The layer order of docs/architecture.md, on every layered folder's modules (tests included: a test
    // may reach anything, so only production modules are checked).
    files: [...LAYERS.keys()].map((folder) => `${folder}/**/*.{ts,tsx}`),
    ignores: ['**/*.test.ts', '**/*.test.tsx'],
    plugins: { layers: { rules: { 'import-order': importOrder } } },
    rules: { 'layers/import-order': 'error' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
