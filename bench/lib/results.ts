import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes bench/results/<name>.json and prints the ratios, the figures that matter on a noisy machine. */
export function reportBenchmark(
  name: string,
  result: { ratios: Record<string, number>; [key: string]: unknown },
): void {
  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  const document = { name, measuredAt: new Date().toISOString(), ...result };
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(document, null, 2)}\n`);
  process.stdout.write(`\n== ${name} ==\n`);
  for (const [ratio, value] of Object.entries(result.ratios)) {
    process.stdout.write(`  ${ratio}: ${value.toFixed(3)}\n`);
  }
}
