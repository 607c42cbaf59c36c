import { formatGoalTable, goalMet, type GoalRow } from './results';
import { latencyPercentiles } from './load';

const row = (now: number, goal: GoalRow['goal']): GoalRow => ({
  label: 'pm_getPaymasterData throughput vs sign-only',
  now,
  goal,
  subject: '900 req/s',
  baseline: '1800 req/s (sign-only)',
});

describe('bench goal table', () => {
  it('judges at-least and at-most goals at their bounds', () => {
    expect(goalMet(row(0.5, { atLeast: 0.5 }))).toBe(true);
    expect(goalMet(row(0.499, { atLeast: 0.5 }))).toBe(false);
    expect(goalMet(row(3, { atMost: 3 }))).toBe(true);
    expect(goalMet(row(3.01, { atMost: 3 }))).toBe(false);
  });

  it('prints now, goal, verdict and both absolute figures for every row', () => {
    const table = formatGoalTable([
      { name: 'paymaster', measuredAt: '2026-11-25T23:00:00.000Z', goals: [row(0.42, { atLeast: 0.5 })] },
      { name: 'settlement', measuredAt: '2026-11-25T23:10:00.000Z', goals: [row(4, { atMost: 4 })] },
    ]);
    const lines = table.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toMatch(/paymaster .*0\.420 .*≥ 0\.5 .*MISSED .*900 req\/s .*1800 req\/s \(sign-only\)/);
    expect(lines[3]).toMatch(/settlement .*4\.000 .*≤ 4 .*met /);
  });

  it('says how to get results when none are stored', () => {
    expect(formatGoalTable([])).toMatch(/npm run bench/);
  });
});

describe('latency percentiles', () => {
  it('keeps sub-millisecond latencies to the microsecond instead of rounding them to 0', () => {
    const latencies = Array.from({ length: 100 }, (_, i) => 0.1 + i * 0.001);
    expect(latencyPercentiles(latencies)).toEqual({ latencyP50Ms: 0.149, latencyP99Ms: 0.198 });
  });
});
