/** Nearest-rank percentile (p in 0–100) of a non-empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of an empty sample');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export interface LatencySummary {
  samples: number;
  p50Ms: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
}

export function summariseLatencies(valuesMs: readonly number[]): LatencySummary {
  return {
    samples: valuesMs.length,
    p50Ms: percentile(valuesMs, 50),
    p95Ms: percentile(valuesMs, 95),
    minMs: Math.min(...valuesMs),
    maxMs: Math.max(...valuesMs),
  };
}
