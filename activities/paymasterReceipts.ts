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

export interface PaymasterReceiptDependencies {
  db: Db;
  networks: NetworkRegistry;
  /** Markup on the gas charge of an included sponsored operation (PAYMASTER_MARKUP_BPS). */
  markupBps?: number;
}

export interface ReceiptScanInput {
  chainId: number;
  /** Checkpoint key (the tracker's workflow id). */
  monitorId: string;
  /** Most blocks one eth_getLogs call covers. */
  maxBlockRange: number;
  /** How long after its validUntil a never-included operation is called `dropped`. */
  droppedGraceSeconds: number;
}

export interface ReceiptScanResult {
  fromBlock: string;
  toBlock: string;
  /** True when the scan reached the safe head (the tracker may sleep). */
  caughtUp: boolean;
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
}: PaymasterReceiptDependencies) {
  const publicClients = createPublicClients(networks);

  return {
    async scanPaymasterReceipts({
      chainId,
      monitorId,
      maxBlockRange,
      droppedGraceSeconds,
    }: ReceiptScanInput): Promise<ReceiptScanResult> {
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
        events: logs.length,
        recorded,
        charged,
        dropped,
      };
    },
  };
}

export type PaymasterReceiptActivities = ReturnType<typeof createPaymasterReceiptActivities>;
