import { type Address, type Hex, type PublicClient, getAbiItem, zeroAddress } from 'viem';
import { YieldVault } from '../contracts/artifacts';

/**
 * The ERC-7540 redeem requests of a deployment's vaults, read from the chain: the `RedeemRequest` events (who
 * asked, for how many shares, when) and each request's state now (`redeemRequest(id)`: what is left to claim and
 * when its cooldown ends). Nothing is stored by us: the vault is the record.
 *
 * A page scans back from a position (newest first) in windows of `windowBlocks` (YIELD_REDEEM_SCAN_BLOCKS, 5,000
 * by default: providers cap a range at about that), at most `MAX_WINDOWS_PER_PAGE` of them, never below the block
 * the vaults were deployed in, so one call costs at most ten `eth_getLogs` plus three reads per request on it.
 * Fifty thousand blocks is about a week of Ethereum, Ethena's cooldown: the first page holds every request still
 * pending there unless more than `limit` were made since.
 */

export const MAX_WINDOWS_PER_PAGE = 10;

const redeemRequestEvent = getAbiItem({ abi: YieldVault.abi, name: 'RedeemRequest' });

export type RedeemRequestStatus = 'pending' | 'claimable' | 'claimed';

/** A place in the vaults' event history: requests strictly before it are on the page that starts there. */
export interface LogPosition {
  blockNumber: bigint;
  logIndex: number;
}

export interface ScannedVault {
  address: Address;
  /** The asset's symbol and decimals (for the caller's display; amounts stay base units). */
  symbol: string;
  decimals: number;
}

export interface RedeemRequestView {
  vault: Address;
  symbol: string;
  decimals: number;
  requestId: bigint;
  controller: Address;
  owner: Address;
  requestedShares: bigint;
  /** Assets the request was fixed at, read as the vault stood at the request's block; null where the node keeps no state that old. */
  requestedAssets: bigint | null;
  unclaimedShares: bigint;
  unclaimedAssets: bigint;
  status: RedeemRequestStatus;
  requestedAt: Date;
  /** When the cooldown ends; null once claimed, or claimable through a cooldown switched off. */
  claimableAt: Date | null;
  /** Seconds of the chain's clock until claimable (pending only). */
  secondsLeft: number | null;
  txHash: Hex;
  blockNumber: bigint;
}

export interface RedeemRequestPage {
  requests: RedeemRequestView[];
  /** The latest block's time: the clock `secondsLeft` counts on. */
  chainTime: Date;
  /** Where the next (older) page starts; null once the scan reached the deployment's block. */
  next: LogPosition | null;
}

const isBefore = (a: LogPosition, b: LogPosition) =>
  a.blockNumber < b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex < b.logIndex);

/** `status` of a request from its state now and the chain's clock, as the vault's own `_isClaimable` decides. */
export function statusOf(
  state: { controller: Address; claimableAt: bigint },
  chainTime: bigint,
): RedeemRequestStatus {
  if (state.controller === zeroAddress) return 'claimed';
  return state.claimableAt === 0n || state.claimableAt <= chainTime ? 'claimable' : 'pending';
}

export async function readRedeemRequests(
  client: PublicClient,
  {
    vaults,
    deployedAtBlock,
    before,
    limit,
    controller,
    windowBlocks,
  }: {
    vaults: ScannedVault[];
    /** The vaults' deployment block: nothing older can hold a request. */
    deployedAtBlock: bigint;
    before?: LogPosition;
    limit: number;
    controller?: Address;
    /** Blocks per `eth_getLogs`. */
    windowBlocks: bigint;
  },
): Promise<RedeemRequestPage> {
  const latest = await client.getBlock({ blockTag: 'latest' });
  const chainTime = latest.timestamp;
  let upper = before
    ? before.blockNumber < latest.number
      ? before.blockNumber
      : latest.number
    : latest.number;
  const found: { log: LogPosition & { txHash: Hex; vault: Address }; args: RedeemRequestArgs }[] = [];
  for (
    let window = 0;
    window < MAX_WINDOWS_PER_PAGE && upper >= deployedAtBlock && found.length <= limit;
    window++
  ) {
    const lower = upper - windowBlocks + 1n > deployedAtBlock ? upper - windowBlocks + 1n : deployedAtBlock;
    const logs = await client.getLogs({
      address: vaults.map((vault) => vault.address),
      event: redeemRequestEvent,
      args: controller ? { controller } : undefined,
      fromBlock: lower,
      toBlock: upper,
      strict: true,
    });
    for (const log of logs) {
      const position = { blockNumber: log.blockNumber, logIndex: log.logIndex };
      if (before && !isBefore(position, before)) continue;
      found.push({ log: { ...position, txHash: log.transactionHash, vault: log.address }, args: log.args });
    }
    upper = lower - 1n;
  }
  found.sort((a, b) => (isBefore(a.log, b.log) ? 1 : isBefore(b.log, a.log) ? -1 : 0));
  const page = found.slice(0, limit);
  const last = page.at(-1);
  const next: LogPosition | null =
    found.length > limit && last
      ? { blockNumber: last.log.blockNumber, logIndex: last.log.logIndex }
      : upper >= deployedAtBlock
        ? { blockNumber: upper + 1n, logIndex: 0 }
        : null;

  const blockTimes = new Map<bigint, Promise<bigint>>();
  const timeOf = (blockNumber: bigint) => {
    let time = blockTimes.get(blockNumber);
    if (!time) {
      time = client.getBlock({ blockNumber }).then((block) => block.timestamp);
      blockTimes.set(blockNumber, time);
    }
    return time;
  };
  const requests = await Promise.all(
    page.map(async ({ log, args }) => {
      const vault = vaults.find((entry) => entry.address.toLowerCase() === log.vault.toLowerCase())!;
      const [now, atRequest, requestedAt] = await Promise.all([
        readRequest(client, log.vault, args.requestId),
        readRequest(client, log.vault, args.requestId, log.blockNumber).catch(() => undefined),
        timeOf(log.blockNumber),
      ]);
      const status = statusOf(now, chainTime);
      const view: RedeemRequestView = {
        vault: vault.address,
        symbol: vault.symbol,
        decimals: vault.decimals,
        requestId: args.requestId,
        controller: args.controller,
        owner: args.owner,
        requestedShares: args.shares,
        requestedAssets: atRequest && atRequest.controller !== zeroAddress ? atRequest.assets : null,
        unclaimedShares: now.shares,
        unclaimedAssets: now.assets,
        status,
        requestedAt: new Date(Number(requestedAt) * 1000),
        claimableAt:
          status === 'claimed' || now.claimableAt === 0n ? null : new Date(Number(now.claimableAt) * 1000),
        secondsLeft: status === 'pending' ? Number(now.claimableAt - chainTime) : null,
        txHash: log.txHash,
        blockNumber: log.blockNumber,
      };
      return view;
    }),
  );
  return { requests, chainTime: new Date(Number(chainTime) * 1000), next };
}

interface RedeemRequestArgs {
  controller: Address;
  owner: Address;
  requestId: bigint;
  sender: Address;
  shares: bigint;
}

async function readRequest(client: PublicClient, vault: Address, requestId: bigint, blockNumber?: bigint) {
  const [controller, shares, assets, claimableAt] = await client.readContract({
    address: vault,
    abi: YieldVault.abi,
    functionName: 'redeemRequest',
    args: [requestId],
    ...(blockNumber !== undefined && { blockNumber }),
  });
  return { controller, shares, assets, claimableAt };
}
