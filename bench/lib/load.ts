import autocannon from 'autocannon';
import { percentile } from './percentiles';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Concurrent connections. */
  connections?: number;
  durationSec?: number;
}

export interface LoadFigures {
  requestsPerSec: number;
  /** Latencies of 2xx answers, to the microsecond (autocannon's own histogram keeps whole milliseconds). */
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
}

/** Same as autocannon's options; kept loose so callers can pass `requests` with setupRequest/onResponse. */
export type AutocannonOptions = autocannon.Options;

/**
 * Runs autocannon once and reads every 2xx answer's latency from its `response` events, which carry
 * hrtime durations: a p99 in whole milliseconds was 0 for a fast route and made ratios meaningless.
 */
export async function runAutocannon(
  options: AutocannonOptions,
): Promise<{ result: autocannon.Result; latenciesMs: number[] }> {
  const latenciesMs: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error, finished) => (error ? reject(error) : resolve(finished)));
    instance.on(
      'response',
      (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
        if (statusCode >= 200 && statusCode < 300) latenciesMs.push(responseTimeMs);
      },
    );
  });
  return { result, latenciesMs };
}

/** p50 and p99 rounded to the microsecond; 0 when nothing answered 2xx (the caller fails on non2xx anyway). */
export function latencyPercentiles(latenciesMs: readonly number[]): {
  latencyP50Ms: number;
  latencyP99Ms: number;
} {
  if (latenciesMs.length === 0) return { latencyP50Ms: 0, latencyP99Ms: 0 };
  const microsecond = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    latencyP50Ms: microsecond(percentile(latenciesMs, 50)),
    latencyP99Ms: microsecond(percentile(latenciesMs, 99)),
  };
}

/** Drives `url` with autocannon (same generator for subject and baseline) after a short warm-up. */
export async function measureLoad(options: LoadOptions): Promise<LoadFigures> {
  const base = {
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections ?? 32,
  };
  await runAutocannon({ ...base, duration: 1 });
  const { result, latenciesMs } = await runAutocannon({ ...base, duration: options.durationSec ?? 5 });
  return {
    requestsPerSec: result.requests.average,
    ...latencyPercentiles(latenciesMs),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}
