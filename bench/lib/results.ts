import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RESULTS_DIR = join(__dirname, '..', 'results');

/** One row of issue 20's table: a same-run figure against its goal, with both sides' absolute figures. */
export interface GoalRow {
  label: string;
  /** The measured ratio (or count, e.g. blocks), from one run against its own baseline. */
  now: number;
  goal: { atLeast: number } | { atMost: number };
  /** Absolute figures of the subject, e.g. '1234 req/s, p99 12.3 ms'. */
  subject: string;
  /** Absolute figures of the baseline and what it is, e.g. '2400 req/s, p99 4.1 ms (sign-only Koa route)'. */
  baseline: string;
}

export function goalMet(row: GoalRow): boolean {
  return 'atLeast' in row.goal ? row.now >= row.goal.atLeast : row.now <= row.goal.atMost;
}

/** Writes bench/results/<name>.json and prints the ratios, the figures that matter on a noisy machine. */
export function reportBenchmark(
  name: string,
  result: { ratios: Record<string, number>; goals?: GoalRow[]; [key: string]: unknown },
): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const document = { name, measuredAt: new Date().toISOString(), ...result };
  writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(document, null, 2)}\n`);
  process.stdout.write(`\n== ${name} ==\n`);
  for (const [ratio, value] of Object.entries(result.ratios)) {
    process.stdout.write(`  ${ratio}: ${value.toFixed(3)}\n`);
  }
  for (const row of result.goals ?? []) process.stdout.write(`  ${formatGoalRow(row)}\n`);
}

function formatGoal(goal: GoalRow['goal']): string {
  return 'atLeast' in goal ? `≥ ${goal.atLeast}` : `≤ ${goal.atMost}`;
}

function formatGoalRow(row: GoalRow): string {
  return `${goalMet(row) ? 'met ' : 'MISS'} ${row.label}: ${row.now.toFixed(3)} (goal ${formatGoal(row.goal)}); ${row.subject} vs ${row.baseline}`;
}

interface StoredResult {
  name: string;
  measuredAt: string;
  goals?: GoalRow[];
  machine?: unknown;
}

/** Every stored result that carries goals, by bench name. */
export function readStoredResults(): StoredResult[] {
  let files: string[];
  try {
    files = readdirSync(RESULTS_DIR).filter((file) => file.endsWith('.json'));
  } catch {
    return [];
  }
  return files
    .sort()
    .map((file) => JSON.parse(readFileSync(join(RESULTS_DIR, file), 'utf8')) as StoredResult)
    .filter((result) => Array.isArray(result.goals) && result.goals.length > 0);
}

/** The issue's table, now vs goal, from bench/results/*.json: what `npm run bench` ends with. */
export function formatGoalTable(results: StoredResult[]): string {
  const rows = results.flatMap((result) =>
    result.goals!.map((row) => ({
      bench: result.name,
      label: row.label,
      now: row.now.toFixed(3),
      goal: formatGoal(row.goal),
      met: goalMet(row) ? 'met' : 'MISSED',
      subject: row.subject,
      baseline: row.baseline,
      measuredAt: result.measuredAt.slice(0, 16).replace('T', ' '),
    })),
  );
  if (rows.length === 0) return 'no results with goals in bench/results/ yet: run `npm run bench`\n';
  const columns = ['bench', 'label', 'now', 'goal', 'met', 'subject', 'baseline', 'measuredAt'] as const;
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => String(row[column]).length)),
  );
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    line([...columns]),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map((row) => line(columns.map((column) => String(row[column])))),
  ]
    .map((text) => `${text}\n`)
    .join('');
}
