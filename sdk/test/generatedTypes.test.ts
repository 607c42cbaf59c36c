import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The committed SDK types are what openapi-typescript makes of the current /openapi.json: a route
 * changed without `npm run sdk:generate` fails here.
 */
it('sdk/src/generated/openapi.ts is up to date with the routes', () => {
  const root = join(__dirname, '..', '..');
  const result = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      join(root, 'sdk', 'scripts', 'generate.ts'),
      '--check',
    ],
    { cwd: root, encoding: 'utf8', timeout: 120_000 },
  );
  expect(`${result.stdout}${result.stderr}`).toContain('is up to date');
  expect(result.status).toBe(0);
}, 130_000);
