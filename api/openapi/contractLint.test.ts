import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openApiDocumentsOfApp } from './appDocuments';

/**
 * Both published contracts pass the two mainstream OpenAPI linters with no error: Redocly CLI with its
 * recommended rules (redocly.yaml) and Spectral with `spectral:oas` (.spectral.yaml), run on the
 * documents exactly as the app serves them. Warnings are printed with their rule, for the record.
 */
const root = join(__dirname, '..', '..');
const REDOCLY = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
const SPECTRAL = join(root, 'node_modules', '@stoplight', 'spectral-cli', 'dist', 'index.js');

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: {
        ...process.env,
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        NO_COLOR: '1',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('OpenAPI lint (Redocly, Spectral)', () => {
  let workDir: string;
  const files: Record<'full' | 'integrator', string> = { full: '', integrator: '' };

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'stablepay-openapi-lint-'));
    const documents = await openApiDocumentsOfApp();
    for (const name of ['full', 'integrator'] as const) {
      files[name] = join(workDir, `${name}.json`);
      await writeFile(files[name], JSON.stringify(documents[name], null, 2));
    }
  });
  afterAll(() => rm(workDir, { recursive: true, force: true }));

  it.each(['full', 'integrator'] as const)(
    'Redocly finds no error in the %s document',
    async (name) => {
      const result = await run([
        REDOCLY,
        'lint',
        files[name],
        '--config',
        join(root, 'redocly.yaml'),
        '--format=json',
      ]);
      const report = JSON.parse(result.stdout) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
      };
      const errors = report.problems.filter((problem) => problem.severity === 'error');
      console.log(
        `Redocly ${name}: ${report.totals.errors} errors, ${report.totals.warnings} warnings\n` +
          report.problems.map((p) => `  ${p.severity} ${p.ruleId} ${p.location[0]?.pointer}`).join('\n'),
      );
      expect(errors.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
      expect(report.totals.errors).toBe(0);
    },
    120_000,
  );

  it.each(['full', 'integrator'] as const)(
    'Spectral finds no error in the %s document',
    async (name) => {
      const result = await run([
        SPECTRAL,
        'lint',
        files[name],
        '--ruleset',
        join(root, '.spectral.yaml'),
        '-f',
        'json',
        '--quiet',
      ]);
      // Severity 0 is an error, 1 a warning, 2 info, 3 hint.
      const problems = JSON.parse(result.stdout || '[]') as {
        code: string;
        severity: number;
        path: string[];
        message: string;
      }[];
      console.log(
        `Spectral ${name}: ${problems.filter((p) => p.severity === 0).length} errors, ` +
          `${problems.filter((p) => p.severity === 1).length} warnings\n` +
          problems.map((p) => `  ${p.severity} ${p.code} ${p.path.join('.')}`).join('\n'),
      );
      expect(
        problems.filter((p) => p.severity === 0).map((p) => `${p.code} ${p.path.join('.')}: ${p.message}`),
      ).toEqual([]);
      expect(result.code).toBe(0);
    },
    120_000,
  );
});
