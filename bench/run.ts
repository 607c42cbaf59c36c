import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { formatGoalTable, readStoredResults } from './lib/results';

/**
 * `npm run bench [name...]`: runs bench/<name>.bench.ts files one after another (never in parallel:
 * they would measure each other). Each prints ratios and writes bench/results/<name>.json; the run
 * ends with the table of every stored result's goals (now vs goal, baseline figures beside).
 * `npm run bench table` prints only that table.
 */
const wanted = process.argv.slice(2);
/** Benches whose length is the point (the memory soak: about 35 minutes): run only when named. */
const RUN_ONLY_BY_NAME = new Set(['soak']);
const onlyTable = wanted.length === 1 && wanted[0] === 'table';
const files = onlyTable
  ? []
  : readdirSync(__dirname)
      .filter((file) => file.endsWith('.bench.ts'))
      .filter((file) =>
        wanted.length === 0
          ? !RUN_ONLY_BY_NAME.has(file.replace(/\.bench\.ts$/, ''))
          : wanted.includes(file.replace(/\.bench\.ts$/, '')),
      )
      .sort();

let failed = 0;
for (const file of files) {
  process.stdout.write(`\n>> ${file}\n`);
  const result = spawnSync(process.execPath, [require.resolve('tsx/cli'), join(__dirname, file)], {
    stdio: 'inherit',
  });
  if (result.status !== 0) failed += 1;
}
process.stdout.write(`\n== now vs goal (bench/results/*.json) ==\n${formatGoalTable(readStoredResults())}`);
process.exit(failed ? 1 : 0);
