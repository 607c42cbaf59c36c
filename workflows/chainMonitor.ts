import { continueAsNew, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { ChainMonitorActivities, ScanForm } from '../activities/chainMonitor';

const { scanDeposits } = proxyActivities<ChainMonitorActivities>({
  startToCloseTimeout: '2 minutes',
  // The scan heartbeats: a worker that dies mid-range has its scan retried (the same range, from the
  // checkpoint) by another within 20 s, not after the 2-minute start-to-close timeout.
  heartbeatTimeout: '20 seconds',
  // RPC outages: back off up to a minute between tries, forever; the checkpoint makes retries resume.
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export interface ChainMonitorInput {
  chainId: number;
  /** Also the checkpoint key. */
  monitorId: string;
  pollIntervalMs: number;
  maxBlockRange: number;
  /** The range the next scan tries (carried across continue-as-new); maxBlockRange at first. */
  blockRange?: number;
  /** The last scan's form (carried across continue-as-new): after an unfiltered one, no sizing probe. */
  previousForm?: ScanForm;
}

/** Scans per run before continuing as new, keeping the history small however long the monitor lives. */
const SCANS_PER_RUN = 200;

/**
 * `chain-monitor-<chainId>`: the deposit monitor of one chain. Scans in bounded, adaptive ranges until
 * it has caught up with the safe head, then polls; continues as new to keep its history bounded. One
 * activity covers a cycle of ranges (the worker's CHAIN_MONITOR_CYCLE_MS, 30 s by default: each range
 * scanned as its blocks become safe, checkpointed, its sessions signalled), so this loop turns about twice
 * a minute, not once per block.
 */
export async function chainMonitorWorkflow(input: ChainMonitorInput): Promise<never> {
  // Adaptive: a provider's size refusal narrows the range, small scans grow it back (the activity advises).
  let blockRange = input.blockRange ?? input.maxBlockRange;
  let previousForm = input.previousForm;
  // The scan waits for the next safe block itself (polling the head), so a deposit is seen within a
  // head poll of its last confirmation instead of up to a poll interval later; no timer between scans.
  const waitsInScan = patched('monitor-waits-for-block-in-scan');
  for (let scan = 0; scan < SCANS_PER_RUN; scan += 1) {
    const result = await scanDeposits({
      chainId: input.chainId,
      monitorId: input.monitorId,
      maxBlockRange: input.maxBlockRange,
      blockRange,
      ...(previousForm && { previousForm }),
      ...(waitsInScan && { waitForBlockMs: input.pollIntervalMs }),
    });
    blockRange = result.nextBlockRange ?? blockRange;
    previousForm = result.form ?? previousForm;
    if (result.caughtUp && !waitsInScan) await sleep(input.pollIntervalMs);
  }
  return continueAsNew<typeof chainMonitorWorkflow>({
    ...input,
    blockRange,
    ...(previousForm && { previousForm }),
  });
}
