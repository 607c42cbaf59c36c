import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm run bench [name...]`: runs bench/<name>.bench.ts files one after another (never in parallel:
 * they would measure each other). Each prints ratios and writes bench/results/<name>.json.
 */
const wanted = process.argv.slice(2);
const files = readdirSync(__dirname)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => wanted.length === 0 || wanted.includes(file.replace(/\.bench\.ts$/, '')))
  .sort();

let failed = 0;
for (const file of files) {
  process.stdout.write(`\n>> ${file}\n`);
  const result = spawnSync(process.execPath, [require.resolve('tsx/cli'), join(__dirname, file)], {
    stdio: 'inherit',
  });
  if (result.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
