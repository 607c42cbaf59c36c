import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSchemathesisInstalled } from '../../dev/installSchemathesis';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { createPaymasterClient } from '../paymaster/paymasterApi';

/**
 * Fuzzing from the contract (issue 14): schemathesis generates requests from the app's own
 * `/openapi.json` — valid and invalid ones, on every operation — and sends them to the real app with a
 * signed-in merchant's credentials. No answer may be a 5xx, and every answer must be one the document
 * declares for that operation, with the declared content type and body schema. The budget is bounded
 * (examples per operation and a time limit) and the seed is printed, so a failure can be replayed with
 * `SCHEMATHESIS_SEED=<seed>`.
 */
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
];

describe('schemathesis against /openapi.json', () => {
  let app: TestApp;
  let workDir: string;
  let config: string;

  beforeAll(async () => {
    await ensureSchemathesisInstalled();
    app = await startTestApp();
    const merchant = await signInNewMerchant(app);
    const secretKey = await createApiKey(app, merchant, 'schemathesis');
    const client = await createPaymasterClient(app, merchant, { allowedChainIds: [84532] });
    // Real resources for the operations with an id in their path, so those reach their logic, not only 404.
    // (Not the API key or client the run authenticates with: a fuzzed DELETE would revoke them mid-run.)
    const sk = { authorization: `Bearer ${secretKey}` };
    const created = async (path: string, headers: Record<string, string>, json: object) => {
      const response = await app.request(path, { method: 'POST', headers, json });
      if (response.status >= 300) throw new Error(`${path} answered ${response.status}: ${response.text}`);
      return response.body;
    };
    const session = await created('/v1/sessions', sk, { amount: '5', sandboxMode: true });
    const webhook = await created('/v1/webhooks', sk, { url: 'http://127.0.0.1:9/hooks' });
    const allowlisted = await created('/v1/paymaster/allowlist', merchant.auth, {
      chainId: 84532,
      contractAddress: '0x1000000000000000000000000000000000000001',
    });
    const denied = await created('/v1/paymaster/deny-rules', merchant.auth, {
      chainId: 84532,
      kind: 'sender',
      address: '0x2000000000000000000000000000000000000002',
    });
    const spareClient = await createPaymasterClient(app, merchant, { allowedChainIds: [84532] });
    const spareKey = (await created('/v1/merchants/me/api-keys', merchant.auth, { label: 'spare' })).id;
    const ids: [string, string][] = [
      ['^/pay/|/sessions/\\{id\\}', session.id],
      ['/webhooks/\\{id\\}', webhook.id],
      ['^/v1/paymaster/allowlist/', allowlisted.id],
      ['^/v1/paymaster/deny-rules/', denied.id],
      ['^/v1/paymaster/clients/', spareClient.id],
      ['^/v1/merchants/me/api-keys/', spareKey],
    ];
    workDir = await mkdtemp(join(tmpdir(), 'stablepay-schemathesis-'));
    config = join(workDir, 'schemathesis.toml');
    // Credentials by the document's security scheme names, so each operation gets the one it declares.
    await writeFile(
      config,
      [
        '[auth.openapi.merchantJwt]',
        `bearer = "${merchant.token}"`,
        '[auth.openapi.secretApiKey]',
        `bearer = "${secretKey}"`,
        '[auth.openapi.paymasterClientId]',
        `api_key = "${client.clientId}"`,
        ...ids.flatMap(([pathRegex, id]) => [
          '[[operations]]',
          // A TOML literal string: the regex's backslashes stay as they are.
          `include-path-regex = '${pathRegex}'`,
          `parameters = { "path.id" = "${id}" }`,
        ]),
        '',
      ].join('\n'),
    );
  }, 240_000);

  afterAll(async () => {
    await app?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('finds no server error and no response outside the documented schema', async () => {
    const seed = Number(process.env.SCHEMATHESIS_SEED ?? randomInt(1, 2 ** 31));
    const cli = await ensureSchemathesisInstalled();
    const args = [
      ...cli.args,
      '--config-file',
      config,
      'run',
      `${app.baseUrl}/openapi.json`,
      '--url',
      app.baseUrl,
      '--checks',
      CHECKS.join(','),
      '--phases',
      'examples,coverage,fuzzing',
      '--max-examples',
      '8',
      '--max-time',
      '60',
      // One worker: hypothesis parses lambda sources with `ast`, which CPython 3.11 cannot do from two
      // threads at once ("AST constructor recursion depth mismatch" errors in the run).
      '--workers',
      '1',
      '--seed',
      String(seed),
      '--request-timeout',
      '20',
      '--generation-database',
      'none',
      '--no-color',
      '--output-truncate',
      'true',
    ];
    process.stdout.write(`schemathesis seed ${seed} (replay with SCHEMATHESIS_SEED=${seed})\n`);
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(cli.command, args, {
        env: { ...process.env, ...cli.env, COLUMNS: '120', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', reject);
      child.once('close', (exitCode) => resolve({ code: exitCode, output: text }));
    });
    process.stdout.write(output);
    // The closing summary, e.g. "=== 412 passed in 71.02s ===" or "=== 3 failures, 409 passed ... ===".
    const summary = output
      .trim()
      .split('\n')
      .reverse()
      .find((line) => /^=+ .* in [\d.]+s =+$/.test(line.trim()));
    const casesLine = /^\s*(\d+) generated, .*$/m.exec(output);
    // The summary's "Failures:" lines, e.g. "❌ ST101 Server error: 38": server errors are ST101/ST102.
    const failures = [...output.matchAll(/^\s*❌ (ST\d+) (.+): (\d+)$/gm)].map(([, code, title, count]) => ({
      code: code!,
      title: title!,
      count: Number(count),
    }));
    const total = (wanted: (code: string) => boolean) =>
      failures.filter(({ code }) => wanted(code)).reduce((sum, { count }) => sum + count, 0);
    const serverErrors = total((code) => code === 'ST101' || code === 'ST102');
    const offContract = total((code) => code !== 'ST101' && code !== 'ST102');
    process.stdout.write(
      `schemathesis summary (seed ${seed}): ${summary?.trim() ?? '(none)'}\n` +
        `schemathesis: ${casesLine?.[0].trim() ?? '? generated'}; ${serverErrors} server errors, ` +
        `${offContract} responses outside the documented schema\n`,
    );
    expect(failures).toEqual([]);
    expect(summary).toBeDefined();
    expect(summary).not.toMatch(/fail|error/i);
    expect(code).toBe(0);
  }, 180_000);
});
