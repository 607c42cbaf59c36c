import { getUserOperationHash, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { type Address, type Hex, concat, encodeAbiParameters, stringToHex } from 'viem';
import { keccak256 } from '../../chain/keccak256';
import type { EntryPointVersion } from '../../chain/entryPoints';
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
  const userOperation = toViemUserOperation(chainId, userOp, paymaster);
  if (entryPointVersion === '0.8') return entryPointV08Hash(chainId, entryPoint, userOperation);
  return getUserOperationHash({ chainId, entryPointAddress: entryPoint, entryPointVersion, userOperation });
}

/** The operation as viem types it, with our paymaster fields: what both hashes are computed over. */
export function toViemUserOperation(
  chainId: number,
  userOp: SponsorshipUserOperation,
  paymaster: Pick<
    PaymasterResult,
    'paymaster' | 'paymasterData' | 'paymasterVerificationGasLimit' | 'paymasterPostOpGasLimit'
  >,
): UserOperation<'0.7'> {
  return {
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
}

/**
 * EntryPoint v0.8's userOpHash: the EIP-712 hash of the packed operation (domain ERC4337 / 1 / chain /
 * EntryPoint), what viem's `getUserOperationHash` computes through `hashTypedData`, which hashes the
 * type string and the domain again on every call (the api's largest keccak cost under load). The type
 * hash is a constant and the domain separator is kept per (chain, EntryPoint); userOpHash.test.ts
 * checks the result against viem's for every kind of operation.
 */
const PACKED_USER_OPERATION_TYPEHASH = keccak256(
  stringToHex(
    'PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)',
  ),
);
const EIP712_DOMAIN_TYPEHASH = keccak256(
  stringToHex('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
);
const domainSeparators = new Map<string, Hex>();

function domainSeparator(chainId: number, entryPoint: Address): Hex {
  const key = `${chainId}:${entryPoint.toLowerCase()}`;
  let separator = domainSeparators.get(key);
  if (!separator) {
    separator = keccak256(
      encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'uint256' },
          { type: 'address' },
        ],
        [
          EIP712_DOMAIN_TYPEHASH,
          keccak256(stringToHex('ERC4337')),
          keccak256(stringToHex('1')),
          BigInt(chainId),
          entryPoint,
        ],
      ),
    );
    domainSeparators.set(key, separator);
  }
  return separator;
}

function entryPointV08Hash(chainId: number, entryPoint: Address, userOperation: UserOperation<'0.7'>): Hex {
  const packed = toPackedUserOperation(userOperation as unknown as UserOperation<'0.8'>, { forHash: true });
  const structHash = keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'bytes32' },
      ],
      [
        PACKED_USER_OPERATION_TYPEHASH,
        packed.sender,
        packed.nonce,
        keccak256(packed.initCode),
        keccak256(packed.callData),
        packed.accountGasLimits,
        packed.preVerificationGas,
        packed.gasFees,
        keccak256(packed.paymasterAndData),
      ],
    ),
  );
  return keccak256(concat(['0x1901', domainSeparator(chainId, entryPoint), structHash]));
}
