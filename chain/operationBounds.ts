import type { Hex } from 'viem';
import type { Logger } from '../logging/logger';
import type { PublicClients } from './publicClients';
import { shareChainReads } from './sharedChainReads';

/**
 * Bounds on what a signed user operation may ask of a paymaster, shared by the API's policy and the
 * signing service's own checks: its gas (every limit plus preVerificationGas, the paymaster's as they
 * will be signed) and its fees against the chain's current fee level. Without them one operation could
 * reserve a whole deposit or balance, or pay a bundler an inflated tip out of the sponsor's money.
 */

/** A chain's current fee level: the latest block's base fee and the node's suggested priority fee. */
export interface ChainFeeLevel {
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface ChainFeeLevels {
  /** The chain's current fees, or undefined when they cannot be read. */
  current(chainId: number): Promise<ChainFeeLevel | undefined>;
}

const REUSE_MS = 1_000;

/**
 * Reads fee levels through the chains' RPCs. Concurrent requests share a read and a read is reused for
 * a second, so a burst of signing costs one pair of RPC calls per chain; a failed read is not reused.
 */
export function createChainFeeLevels({
  publicClients,
  logger,
  now = () => Date.now(),
}: {
  publicClients: PublicClients;
  logger?: Logger;
  now?: () => number;
}): ChainFeeLevels {
  const read = async (chainId: number): Promise<ChainFeeLevel | undefined> => {
    const client = publicClients.forChain(chainId);
    if (!client) return undefined;
    try {
      const [block, priority] = await Promise.all([
        client.getBlock({ blockTag: 'latest' }),
        client.request({ method: 'eth_maxPriorityFeePerGas' }) as Promise<Hex>,
      ]);
      if (block.baseFeePerGas === null) return undefined;
      return { baseFeePerGas: block.baseFeePerGas, maxPriorityFeePerGas: BigInt(priority) };
    } catch (error) {
      // Transport errors may carry the RPC URL (and a provider key in it): only the error's name is logged.
      logger?.warn({ errorName: (error as Error)?.name, chainId }, 'chain gas fees could not be read');
      return undefined;
    }
  };

  return { current: shareChainReads(read, { reuseMs: REUSE_MS, now }) };
}

export interface OperationGas {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
}

/** What the operation's gas limits add up to: the gas its maximum cost is counted over. */
export function totalGas(gas: OperationGas): bigint {
  return (
    gas.callGasLimit +
    gas.verificationGasLimit +
    gas.preVerificationGas +
    gas.paymasterVerificationGasLimit +
    gas.paymasterPostOpGasLimit
  );
}

/** Why the operation's gas is out of bounds, or undefined when it is within them. */
export function gasLimitViolation(gas: OperationGas, maxOperationGas: number): string | undefined {
  const total = totalGas(gas);
  return total <= BigInt(maxOperationGas)
    ? undefined
    : `the operation's gas limits add up to ${total}, above the limit of ${maxOperationGas}`;
}

const BPS = 10_000n;

/**
 * Why the operation's fees are out of bounds, or undefined when they are within them: maxFeePerGas at
 * most `boundBps` of (2 × base fee + priority fee) — what wallets offer by default — and
 * maxPriorityFeePerGas at most `boundBps` of (base fee + priority fee).
 */
export function feeViolation(
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  level: ChainFeeLevel,
  boundBps: number,
): string | undefined {
  const bound = BigInt(boundBps);
  const share = `${boundBps / 100}%`;
  const maxFee = ((2n * level.baseFeePerGas + level.maxPriorityFeePerGas) * bound) / BPS;
  if (fees.maxFeePerGas > maxFee)
    return `maxFeePerGas ${fees.maxFeePerGas} wei is above ${maxFee} wei (${share} of the chain's 2 × base fee ${level.baseFeePerGas} + priority fee ${level.maxPriorityFeePerGas})`;
  const maxTip = ((level.baseFeePerGas + level.maxPriorityFeePerGas) * bound) / BPS;
  if (fees.maxPriorityFeePerGas > maxTip)
    return `maxPriorityFeePerGas ${fees.maxPriorityFeePerGas} wei is above ${maxTip} wei (${share} of the chain's base fee ${level.baseFeePerGas} + priority fee ${level.maxPriorityFeePerGas})`;
  return undefined;
}
