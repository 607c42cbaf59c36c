import type { Client } from '@temporalio/client';
import { chainMonitorWorkflow } from '../workflows/chainMonitor';
import { startPerChainWorkflows } from './perChainWorkflows';
import { chainMonitorWorkflowId } from '../workflows/workflowIds';

export interface StartChainMonitorsParameters {
  chainIds: number[];
  taskQueue: string;
  /** Prefix of the workflow ids (the deployment's task-queue prefix), so test runs do not share monitors. */
  workflowIdPrefix?: string;
  pollIntervalMs?: number;
  maxBlockRange?: number;
}

/** Starts the deposit monitor of every chain that is not running yet (idempotent; run at worker start). */
export async function startChainMonitors(
  client: Client,
  {
    chainIds,
    taskQueue,
    workflowIdPrefix = '',
    pollIntervalMs = 2000,
    maxBlockRange = 2000,
  }: StartChainMonitorsParameters,
): Promise<string[]> {
  return startPerChainWorkflows(client, {
    chainIds,
    taskQueue,
    workflow: chainMonitorWorkflow,
    workflowIdOf: (chainId) => chainMonitorWorkflowId(chainId, workflowIdPrefix),
    inputOf: (chainId, monitorId) => ({ chainId, monitorId, pollIntervalMs, maxBlockRange }),
  });
}
