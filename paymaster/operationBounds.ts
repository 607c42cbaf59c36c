import { type CheckOutcome, PASSED, denied } from './denials';
import type { ChainFeeLevel } from './chainFees';

/**
 * Bounds on what a signed operation may ask of the paymaster, checked before it is priced or held:
 * its gas (every limit plus preVerificationGas, the paymaster's as they will be signed) and its fees
 * against the chain's current fee level. Without them one request could reserve a whole deposit or
 * balance, or pay a bundler an inflated tip out of the merchant's money; and its cost could leave the
 * range the limit counters hold.
 */

const BPS = 10_000n;

export interface OperationGas {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
}

export function totalGas(gas: OperationGas): bigint {
  return (
    gas.callGasLimit +
    gas.verificationGasLimit +
    gas.preVerificationGas +
    gas.paymasterVerificationGasLimit +
    gas.paymasterPostOpGasLimit
  );
}

export function checkGasLimit(gas: OperationGas, maxOperationGas: number): CheckOutcome {
  const total = totalGas(gas);
  if (total <= BigInt(maxOperationGas)) return PASSED;
  return denied(
    'paymaster_gas_limit_too_high',
    `the operation's gas limits add up to ${total}, above the limit of ${maxOperationGas}`,
    'gas_limit_too_high',
  );
}

/**
 * maxFeePerGas at most `boundBps` of (2 × base fee + priority fee) — what wallets offer by default —
 * and maxPriorityFeePerGas at most `boundBps` of (base fee + priority fee).
 */
export function checkFees(
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  level: ChainFeeLevel,
  boundBps: number,
): CheckOutcome {
  const bound = BigInt(boundBps);
  const maxFee = ((2n * level.baseFeePerGas + level.maxPriorityFeePerGas) * bound) / BPS;
  const maxTip = ((level.baseFeePerGas + level.maxPriorityFeePerGas) * bound) / BPS;
  if (fees.maxFeePerGas > maxFee) {
    return denied(
      'paymaster_gas_price_too_high',
      `maxFeePerGas ${fees.maxFeePerGas} wei is above ${maxFee} wei (${boundBps / 100}% of the chain's 2 × base fee ${level.baseFeePerGas} + priority fee ${level.maxPriorityFeePerGas})`,
      'gas_price_too_high',
    );
  }
  if (fees.maxPriorityFeePerGas > maxTip) {
    return denied(
      'paymaster_gas_price_too_high',
      `maxPriorityFeePerGas ${fees.maxPriorityFeePerGas} wei is above ${maxTip} wei (${boundBps / 100}% of the chain's base fee ${level.baseFeePerGas} + priority fee ${level.maxPriorityFeePerGas})`,
      'gas_price_too_high',
    );
  }
  return PASSED;
}
