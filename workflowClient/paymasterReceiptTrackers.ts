import type { Client } from '@temporalio/client';
import { paymasterReceiptTrackerWorkflow } from '../workflows/paymasterReceipts';
import { startPerChainWorkflows } from './perChainWorkflows';
import { paymasterReceiptTrackerWorkflowId } from '../workflows/workflowIds';

export interface StartPaymasterReceiptTrackersParameters {
  chainIds: number[];
  taskQueue: string;
  /** Prefix of the workflow ids (the deployment's task-queue prefix), so test runs do not share trackers. */
  workflowIdPrefix?: string;
  pollIntervalMs?: number;
  maxBlockRange?: number;
  /** Paymaster data validity is 10 minutes; this much later an unseen operation is `dropped`. */
  droppedGraceSeconds?: number;
}

/** Starts the receipt tracker of every chain that is not running yet (idempotent; run at worker start). */
export async function startPaymasterReceiptTrackers(
  client: Client,
  {
    chainIds,
    taskQueue,
    workflowIdPrefix = '',
    pollIntervalMs = 2000,
    maxBlockRange = 2000,
    droppedGraceSeconds = 120,
  }: StartPaymasterReceiptTrackersParameters,
): Promise<string[]> {
  return startPerChainWorkflows(client, {
    chainIds,
    taskQueue,
    workflow: paymasterReceiptTrackerWorkflow,
    workflowIdOf: (chainId) => paymasterReceiptTrackerWorkflowId(chainId, workflowIdPrefix),
    inputOf: (chainId, monitorId) => ({
      chainId,
      monitorId,
      pollIntervalMs,
      maxBlockRange,
      droppedGraceSeconds,
    }),
  });
}
