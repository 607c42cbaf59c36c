import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { PaymasterReceiptActivities } from '../activities/paymasterReceipts';

const { scanPaymasterReceipts } = proxyActivities<PaymasterReceiptActivities>({
  startToCloseTimeout: '2 minutes',
  // A scan runs for a cycle of blocks (CHAIN_MONITOR_CYCLE_MS) and heartbeats: a worker that dies in one
  // has it retried (from the checkpoint) by another within 20 s, not after the start-to-close timeout.
  heartbeatTimeout: '20 seconds',
  // RPC outages: back off up to a minute between tries, forever; the checkpoint makes retries resume.
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export interface PaymasterReceiptTrackerInput {
  chainId: number;
  /** Also the checkpoint key in chain_monitor_checkpoints. */
  monitorId: string;
  pollIntervalMs: number;
  maxBlockRange: number;
  droppedGraceSeconds: number;
}

/** Scans per run before continuing as new, keeping the history small however long the tracker lives. */
const SCANS_PER_RUN = 200;

/**
 * `paymaster-receipts-<chainId>`: the receipt tracker of one chain. Scans UserOperationEvents of our
 * paymasters in bounded ranges until it has caught up with the safe head, then polls; continues as new.
 */
export async function paymasterReceiptTrackerWorkflow(input: PaymasterReceiptTrackerInput): Promise<never> {
  for (let scan = 0; scan < SCANS_PER_RUN; scan += 1) {
    const result = await scanPaymasterReceipts({
      chainId: input.chainId,
      monitorId: input.monitorId,
      maxBlockRange: input.maxBlockRange,
      droppedGraceSeconds: input.droppedGraceSeconds,
      headPollMs: input.pollIntervalMs,
    });
    if (result.caughtUp) await sleep(input.pollIntervalMs);
  }
  return continueAsNew<typeof paymasterReceiptTrackerWorkflow>(input);
}
