import { startReadinessServer } from '../health/readiness';
import { createMonitorMetrics } from './monitorMetrics';

/**
 * The deposit monitors' lag on the worker's /metrics (issue 40, item 7): what an operator's alert reads.
 * The scans that feed it are the chain monitor's (test/settlement/depositDetection.test.ts).
 */
it('the worker port serves each chain monitor’s blocks behind the safe head on /metrics, beside /ready', async () => {
  const metrics = createMonitorMetrics();
  metrics.onScanned({ chainId: 8453, blocksBehindSafeHead: 42n });
  metrics.onScanned({ chainId: 1, blocksBehindSafeHead: 7n });
  metrics.onScanned({ chainId: 1, blocksBehindSafeHead: 0n });
  const server = await startReadinessServer({
    port: 0,
    host: '127.0.0.1',
    readiness: async () => ({ ready: true, dependencies: [] }),
    metrics: { contentType: metrics.registry.contentType, text: () => metrics.registry.metrics() },
  });
  try {
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toContain('chain_monitor_blocks_behind_safe_head{chain_id="8453"} 42');
    expect(text).toContain('chain_monitor_blocks_behind_safe_head{chain_id="1"} 0');
    expect(text).toMatch(/chain_monitor_last_scan_timestamp_seconds\{chain_id="1"\} \d+/);
    expect(text).toContain('process_cpu_seconds_total');
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    expect((await fetch(`${server.url}/other`)).status).toBe(404);
  } finally {
    await server.close();
  }
});
