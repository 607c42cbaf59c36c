import { setTimeout as delay } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import type { Address } from 'viem';
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS, entryPointAbi } from '../chain/entryPoints';
import type { NetworkRegistry } from '../chain/networkRegistry';
import { createPublicClients } from '../chain/publicClients';
import { PAYMASTER_RELEASES } from '../chain/paymasters';
import type { Db } from '../db/client';
import { readCheckpoint, writeCheckpoint } from '../db/deposits';
import { DEFAULT_PAYMASTER_MARKUP_BPS } from '../config';
import { recordReceiptAndCharge } from '../db/gasCharges';
import { markDroppedOperations } from '../db/paymasterUsage';
import { heartbeating } from './settlementSteps';

export interface PaymasterReceiptDependencies {
  db: Db;
  networks: NetworkRegistry;
  /** Markup on the gas charge of an included sponsored operation (PAYMASTER_MARKUP_BPS). */
  markupBps?: number;
  /**
   * How long one `scanPaymasterReceipts` activity keeps tracking (CHAIN_MONITOR_CYCLE_MS): caught up, it
   * asks for the head every headPollMs and scans what became safe, so the tracker's workflow task and
   * activity task are paid once per cycle instead of once per poll. 0: one scan per activity.
   */
  cycleMs?: number;
}

/** A 30 s cycle, as the deposit monitor's. */
export const DEFAULT_RECEIPT_CYCLE_MS = 30_000;
/** A caught-up cycle's head poll when the workflow names none: CHAIN_MONITOR_POLL_MS's default. */
const DEFAULT_RECEIPT_HEAD_POLL_MS = 2_000;

export interface ReceiptScanInput {
  chainId: number;
  /** Checkpoint key (the tracker's workflow id). */
  monitorId: string;
  /** Most blocks one eth_getLogs call covers. */
  maxBlockRange: number;
  /** How long after its validUntil a never-included operation is called `dropped`. */
  droppedGraceSeconds: number;
  /** How often a caught-up cycle asks for the head: the tracker's poll interval. */
  headPollMs?: number;
}

export interface ReceiptScanResult {
  fromBlock: string;
  toBlock: string;
  /** True when the scan reached the safe head (the tracker may sleep). */
  caughtUp: boolean;
  /** Ranges scanned (a cycle covers several). */
  ranges: number;
  events: number;
  /** Usage rows that got their receipt in this scan (0 for events already recorded). */
  recorded: number;
  /** Gas charges written in this scan (0 for operations already charged). */
  charged: number;
  dropped: number;
}

const USER_OPERATION_EVENT = entryPointAbi.find(
  (item) => item.type === 'event' && item.name === 'UserOperationEvent',
)!;

/** Our paymasters on this chain (v0.7 and v0.8 deployments), lower-case. */
export function ourPaymasters(contracts: Record<string, Address>): Address[] {
  return Object.values(PAYMASTER_RELEASES).flatMap((release) => {
    const address = contracts[release.contractKey];
    return address ? [address.toLowerCase() as Address] : [];
  });
}

/**
 * One bounded step of a chain's receipt tracker: reads the UserOperationEvents our paymasters paid
 * for on both EntryPoints up to the safe head (head − confirmations), moves their usage rows to
 * `onchain_success` / `onchain_reverted` (charging sponsored ones to the prepaid balance, once), and
 * then drops `submitted` rows whose paymaster data expired (plus the grace) before the last scanned
 * block's time: the EntryPoint refuses them from then on, and every event up to that block has been read. RPC errors throw (the retry is the backoff).
 */
export function createPaymasterReceiptActivities({
  db,
  networks,
  markupBps = DEFAULT_PAYMASTER_MARKUP_BPS,
  cycleMs = DEFAULT_RECEIPT_CYCLE_MS,
}: PaymasterReceiptDependencies) {
  const publicClients = createPublicClients(networks);

  const scan = async ({
    chainId,
    monitorId,
    maxBlockRange,
    droppedGraceSeconds,
  }: ReceiptScanInput): Promise<ReceiptScanResult> => {
    const network = networks.byChainId(chainId);
    if (!network?.rpcUrl) throw new Error(`chain ${chainId} has no RPC URL configured`);
    const paymasters = ourPaymasters(network.contracts);
    const client = publicClients.forChain(chainId)!;
    const head = await client.getBlockNumber();
    const safeHead = head - BigInt(network.confirmations);
    const checkpoint = (await readCheckpoint(db, monitorId)) ?? safeHead - BigInt(maxBlockRange);
    const fromBlock = checkpoint + 1n < 0n ? 0n : checkpoint + 1n;
    const lastInRange = fromBlock + BigInt(maxBlockRange) - 1n;
    const toBlock = lastInRange < safeHead ? lastInRange : safeHead;
    if (toBlock < fromBlock || paymasters.length === 0) {
      return {
        fromBlock: fromBlock.toString(),
        toBlock: checkpoint.toString(),
        caughtUp: true,
        ranges: 0,
        events: 0,
        recorded: 0,
        charged: 0,
        dropped: 0,
      };
    }

    const logs = await client.getLogs({
      address: [ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS],
      event: USER_OPERATION_EVENT,
      args: { paymaster: paymasters },
      fromBlock,
      toBlock,
    });
    let recorded = 0;
    let charged = 0;
    for (const log of logs) {
      // Charged on every sighting, not only when just recorded (a dropped row corrected by the chain
      // is charged then); the unique usage id keeps it to one charge however often blocks are rescanned.
      const outcome = await recordReceiptAndCharge(
        db,
        {
          chainId,
          entryPoint: log.address,
          userOpHash: log.args.userOpHash!,
          success: log.args.success!,
          actualGasCost: log.args.actualGasCost!,
          actualGasUsed: log.args.actualGasUsed!,
          txHash: log.transactionHash!,
          blockNumber: log.blockNumber!,
        },
        markupBps,
      );
      recorded += outcome.recorded;
      charged += outcome.charged;
    }

    // Chain time, not ours: an operation is out of reach once a block later than its validUntil is scanned.
    const scannedUpTo = await client.getBlock({ blockNumber: toBlock });
    const dropped = await markDroppedOperations(db, {
      chainId,
      validBefore: new Date((Number(scannedUpTo.timestamp) - droppedGraceSeconds) * 1000),
    });
    await writeCheckpoint(db, { monitorId, chainId, block: toBlock });
    return {
      fromBlock: fromBlock.toString(),
      toBlock: toBlock.toString(),
      caughtUp: toBlock >= safeHead,
      ranges: 1,
      events: logs.length,
      recorded,
      charged,
      dropped,
    };
  };

  /**
   * Scans for `cycleMs`: on while catching up, every headPollMs once caught up (the workflow's poll before).
   * Each range is complete on its own (recorded, charged, checkpoint written), so a worker that dies in a
   * cycle leaves the retried activity to resume from the checkpoint; recording and charging are once per
   * operation however often a range is read. Worker shutdown cancels the wait: the cycle returns.
   */
  const cycle = async (input: ReceiptScanInput, signal: AbortSignal): Promise<ReceiptScanResult> => {
    const endsAt = Date.now() + cycleMs;
    const headPollMs = input.headPollMs ?? DEFAULT_RECEIPT_HEAD_POLL_MS;
    let total: ReceiptScanResult | undefined;
    for (;;) {
      const result = await scan(input);
      total = total ? addReceiptScans(total, result) : result;
      if (signal.aborted) return total;
      if (!result.caughtUp) continue;
      if (Date.now() + headPollMs >= endsAt) return total;
      await delay(headPollMs, undefined, { signal }).catch(() => undefined);
    }
  };

  return {
    async scanPaymasterReceipts(input: ReceiptScanInput): Promise<ReceiptScanResult> {
      // Called directly (tests) there is no activity: one scan.
      const context = currentActivity();
      if (!context) return scan(input);
      return heartbeating(() => (cycleMs > 0 ? cycle(input, context.cancellationSignal) : scan(input)));
    },
  };
}

function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Two consecutive scans as one: the first's start, the second's end; counts added. */
function addReceiptScans(first: ReceiptScanResult, second: ReceiptScanResult): ReceiptScanResult {
  return {
    fromBlock: first.ranges > 0 ? first.fromBlock : second.fromBlock,
    toBlock: second.toBlock,
    caughtUp: second.caughtUp,
    ranges: first.ranges + second.ranges,
    events: first.events + second.events,
    recorded: first.recorded + second.recorded,
    charged: first.charged + second.charged,
    dropped: first.dropped + second.dropped,
  };
}

export type PaymasterReceiptActivities = ReturnType<typeof createPaymasterReceiptActivities>;
