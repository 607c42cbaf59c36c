import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

export interface MonitorMetrics {
  registry: Registry;
  /** The chain monitor activities' onScanned: each scan's lag behind its chain's safe head. */
  onScanned(scan: { chainId: number; blocksBehindSafeHead: bigint }): void;
}

/**
 * The worker's /metrics (on WORKER_READY_PORT): the process metrics and, per chain, how many safe blocks
 * (head − confirmations) the deposit monitor has not scanned yet after its latest scan. Caught up it is 0;
 * a lag that keeps growing means deposits are seen late (docs/operations.md gives the alert thresholds);
 * and when each chain's monitor last finished a scan.
 */
export function createMonitorMetrics(): MonitorMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const lag = new Gauge({
    name: 'chain_monitor_blocks_behind_safe_head',
    help: 'Safe blocks (head minus confirmations) the deposit monitor has not scanned yet, by chain',
    labelNames: ['chain_id'] as const,
    registers: [registry],
  });
  // A monitor that stopped scanning (RPC down, worker stuck) leaves its lag as it was: this shows it.
  const lastScan = new Gauge({
    name: 'chain_monitor_last_scan_timestamp_seconds',
    help: 'When the deposit monitor last finished a scan, by chain (Unix seconds)',
    labelNames: ['chain_id'] as const,
    registers: [registry],
  });
  return {
    registry,
    onScanned({ chainId, blocksBehindSafeHead }) {
      lag.set({ chain_id: String(chainId) }, Number(blocksBehindSafeHead < 0n ? 0n : blocksBehindSafeHead));
      lastScan.set({ chain_id: String(chainId) }, Date.now() / 1000);
    },
  };
}
