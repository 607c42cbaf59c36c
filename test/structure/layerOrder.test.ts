import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The layer order of docs/architecture.md is enforced by the `layers/import-order` rule in eslint.config.mjs:
 * linted as if they sat in the repository, an upward import and an import between two programs are reported,
 * and a downward import is not (so the rule is not silent by accident). ESLint runs in a child process: its
 * config is an ES module, which jest's module loader cannot import.
 */

const root = resolve(__dirname, '../..');
const LINT_TEXT = `
  import { ESLint } from 'eslint';
  const [file, code] = process.argv.slice(1);
  const [result] = await new ESLint({ cwd: process.cwd() }).lintText(code, { filePath: file });
  const messages = result.messages.filter((message) => message.ruleId === 'layers/import-order');
  process.stdout.write(JSON.stringify(messages.map((message) => message.message)));
`;

/** The layer rule's messages for `code` linted as the repository's file `file` (nothing is written). */
async function layerMessages(file: string, code: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', LINT_TEXT, resolve(root, file), code],
    { cwd: root },
  );
  return JSON.parse(stdout) as string[];
}

describe('the layers/import-order rule', () => {
  it('reports an upward import: db/ reaching into webhooks/', async () => {
    const messages = await layerMessages(
      'db/layerViolation.ts',
      "import { WEBHOOK_RETRY_DELAYS_MS } from '../webhooks/deliveryPolicy';\nexport const delays = WEBHOOK_RETRY_DELAYS_MS;\n",
    );
    expect(messages).toEqual([
      'db/ (layer 3) must not import webhooks/ (layer 4): pass the policy in, or move the shared piece down (docs/architecture.md "Layers")',
    ]);
  });

  it('reports a re-export and a dynamic import as well', async () => {
    const messages = await layerMessages(
      'logging/layerViolation.ts',
      "export * from '../chain/networkRegistry';\nexport const later = () => import('../api/main');\n",
    );
    expect(messages).toHaveLength(2);
  });

  it('reports one program importing another: tool-server/ reaching into api/', async () => {
    const messages = await layerMessages(
      'tool-server/tools/layerViolation.ts',
      "import { apiRouter } from '../../api/router';\nexport const router = apiRouter;\n",
    );
    expect(messages).toEqual([
      'tool-server/ (layer 8) must not import api/ (layer 8): the programs talk over their interfaces, not through each other\'s modules (docs/architecture.md "Layers")',
    ]);
  });

  it('allows downward and sibling imports', async () => {
    const messages = await layerMessages(
      'activities/layerCheck.ts',
      "import { db } from '../db/client';\nimport { sendMail } from '../mail/mailer';\nimport { x } from './other';\nexport { db, sendMail, x };\n",
    );
    expect(messages).toEqual([]);
    expect(
      await layerMessages(
        'yield/layerCheck.ts',
        "export { parseStatementMonth } from '../billing/statementMonth';\n",
      ),
    ).toEqual([]);
  });
});
