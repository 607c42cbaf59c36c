import type { Address } from 'viem';
import { MINIMUM_PAYMASTER_GAS } from '../../chain/paymasterData';
import { type ChainFeeLevels, feeViolation, gasLimitViolation } from '../../chain/operationBounds';
import { denial } from './denials';
import { answerDenial, type DeniedAnswer } from './sponsorshipAnswer';
import type { SponsorshipUserOperation } from './sponsorshipParams';

/** Bounds on a signed operation's gas and fees (against the chain's current fees); needed to sign. */
export interface OperationBounds {
  chainFees: ChainFeeLevels;
  feeBoundBps: number;
  maxOperationGas: number;
}

export interface OperationBoundsDependencies {
  bounds?: OperationBounds;
}

const maxBigInt = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * The gas and fees a signed operation is bounded by: its gas as the signer will sign it (the paymaster
 * limits raised to their floors) within the operation gas cap, and its fees within the chain's current
 * fees. Returns the gas to hold limits for, or the denial.
 */
export async function boundSignedOperation(
  deps: OperationBoundsDependencies,
  chainId: number,
  gas: SponsorshipUserOperation['gas'],
  token: Address | undefined,
): Promise<{ ok: true; signedGas: SignedGas } | DeniedAnswer> {
  const paymasterGasFloors = MINIMUM_PAYMASTER_GAS[token ? 'erc20' : 'sponsored'];
  const signedGas = {
    callGasLimit: gas.callGasLimit!,
    verificationGasLimit: gas.verificationGasLimit!,
    preVerificationGas: gas.preVerificationGas!,
    maxFeePerGas: gas.maxFeePerGas!,
    paymasterVerificationGasLimit: maxBigInt(
      gas.paymasterVerificationGasLimit ?? 0n,
      paymasterGasFloors.verification,
    ),
    paymasterPostOpGasLimit: maxBigInt(gas.paymasterPostOpGasLimit ?? 0n, paymasterGasFloors.postOp),
  };
  if (!deps.bounds) throw new Error('operation bounds are not wired into the paymaster RPC');
  const gasLimit = gasLimitViolation(signedGas, deps.bounds.maxOperationGas);
  if (gasLimit) return answerDenial(denial('paymaster_gas_limit_too_high', gasLimit, 'gas_limit_too_high'));
  const level = await deps.bounds.chainFees.current(chainId);
  if (!level) {
    return answerDenial(
      denial(
        'paymaster_price_unavailable',
        `no current gas fees on chain ${chainId} to bound the operation's fees; retry`,
      ),
    );
  }
  const fees = feeViolation(
    { maxFeePerGas: signedGas.maxFeePerGas, maxPriorityFeePerGas: gas.maxPriorityFeePerGas ?? 0n },
    level,
    deps.bounds.feeBoundBps,
  );
  if (fees) return answerDenial(denial('paymaster_gas_price_too_high', fees, 'gas_price_too_high'));
  return { ok: true, signedGas };
}

export type SignedGas = {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
};
