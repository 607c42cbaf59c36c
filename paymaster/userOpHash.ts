import { getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import type { Address, Hex } from 'viem';
import type { EntryPointVersion } from '../chain/entryPoints';
import type { PaymasterResult } from './signerClient';
import type { SponsorshipUserOperation } from './sponsorshipParams';

/**
 * The hash the EntryPoint will give the operation once it carries our paymaster data (it covers
 * paymasterAndData, so it is known only after signing): the key that ties a usage row to its
 * `UserOperationEvent`. Absent fee and gas fields count as zero, as in the packed operation.
 */
export function sponsoredUserOpHash({
  chainId,
  entryPoint,
  entryPointVersion,
  userOp,
  paymaster,
}: {
  chainId: number;
  entryPoint: Address;
  entryPointVersion: EntryPointVersion;
  userOp: SponsorshipUserOperation;
  paymaster: PaymasterResult;
}): Hex {
  const userOperation: UserOperation<'0.7'> = {
    sender: userOp.sender,
    nonce: userOp.nonce,
    factory: userOp.factory as Address | undefined,
    factoryData: userOp.factoryData,
    callData: userOp.callData,
    callGasLimit: userOp.gas.callGasLimit ?? 0n,
    verificationGasLimit: userOp.gas.verificationGasLimit ?? 0n,
    preVerificationGas: userOp.gas.preVerificationGas ?? 0n,
    maxFeePerGas: userOp.gas.maxFeePerGas ?? 0n,
    maxPriorityFeePerGas: userOp.gas.maxPriorityFeePerGas ?? 0n,
    paymaster: paymaster.paymaster,
    paymasterVerificationGasLimit: BigInt(paymaster.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(paymaster.paymasterPostOpGasLimit),
    paymasterData: paymaster.paymasterData,
    signature: '0x',
    // Only the delegate address enters the hash of an EIP-7702 operation.
    ...(userOp.eip7702Delegate && {
      authorization: { address: userOp.eip7702Delegate, chainId, nonce: 0, r: '0x0', s: '0x0', yParity: 0 },
    }),
  };
  return getUserOperationHash({ chainId, entryPointAddress: entryPoint, entryPointVersion, userOperation });
}
