import { type Address, type Hex, stringToHex } from 'viem';
import type { EntryPointVersion } from '../../chain/entryPoints';
import { uintHex, writeAddress, writeUint } from '../../chain/abiWords';
import { keccak256 } from '../../chain/keccak256';
import { EIP7702_INITCODE_MARKER } from '../../chain/paymasterData';
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
  const packed = packedOperationWords(userOp, paymaster);
  if (entryPointVersion === '0.8') {
    const structHash = keccak256(Buffer.concat([PACKED_USER_OPERATION_TYPEHASH, packed]), 'bytes');
    return keccak256(Buffer.concat([EIP712_PREFIX, domainSeparator(chainId, entryPoint), structHash]));
  }
  // v0.7: keccak256(abi.encode(keccak256(pack(userOp)), entryPoint, chainId)).
  const outer = Buffer.alloc(96);
  outer.set(keccak256(packed, 'bytes'), 0);
  writeAddress(outer, 32, entryPoint);
  writeUint(outer, 64, 32, BigInt(chainId));
  return keccak256(outer);
}

/**
 * The hashes are computed on bytes, not through viem's `getUserOperationHash` (for v0.8 `hashTypedData`,
 * which hashes the type string and the domain again on every call) nor its `encodeAbiParameters` and
 * `toPackedUserOperation` hex round trips: every signed answer computes one, and they were the api's
 * largest CPU cost after its socket writes (docs/performance.md "Paymaster"). The words are those of
 * EntryPoint v0.7/v0.8's `UserOperationLib.encode` (v0.8 inside the EIP-712 struct `PackedUserOperation`,
 * domain ERC4337 / 1 / chain / EntryPoint, kept per chain and EntryPoint). userOpHash.test.ts checks the
 * result against viem's for every kind of operation on both versions.
 */
const PACKED_USER_OPERATION_TYPEHASH = Buffer.from(
  keccak256(
    stringToHex(
      'PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)',
    ),
    'bytes',
  ),
);
const EIP712_DOMAIN_TYPEHASH = Buffer.from(
  keccak256(
    stringToHex('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
    'bytes',
  ),
);
const EIP712_PREFIX = Buffer.from([0x19, 0x01]);
const EIP7702_MARKERS = new Set(['0x7702', '0x7702000000000000000000000000000000000000']);
const domainSeparators = new Map<string, Buffer>();

function domainSeparator(chainId: number, entryPoint: Address): Buffer {
  const key = `${chainId}:${entryPoint.toLowerCase()}`;
  let separator = domainSeparators.get(key);
  if (!separator) {
    const domain = Buffer.alloc(160);
    EIP712_DOMAIN_TYPEHASH.copy(domain, 0);
    Buffer.from(keccak256(stringToHex('ERC4337'), 'bytes')).copy(domain, 32);
    Buffer.from(keccak256(stringToHex('1'), 'bytes')).copy(domain, 64);
    writeUint(domain, 96, 32, BigInt(chainId));
    writeAddress(domain, 128, entryPoint);
    separator = Buffer.from(keccak256(domain, 'bytes'));
    domainSeparators.set(key, separator);
  }
  return separator;
}

/**
 * The eight 32-byte words the EntryPoint hashes: sender, nonce, keccak(initCode), keccak(callData),
 * accountGasLimits (verification ‖ call gas, 16 bytes each), preVerificationGas, gasFees (priority ‖ max
 * fee), keccak(paymasterAndData) (paymaster ‖ its two gas limits ‖ paymasterData). An EIP-7702 operation's
 * initCode is hashed over its delegate (delegate ‖ factoryData; the bare marker without one).
 */
function packedOperationWords(
  userOp: SponsorshipUserOperation,
  paymaster: Pick<
    PaymasterResult,
    'paymaster' | 'paymasterData' | 'paymasterVerificationGasLimit' | 'paymasterPostOpGasLimit'
  >,
): Buffer {
  const words = Buffer.alloc(256);
  writeAddress(words, 0, userOp.sender);
  writeUint(words, 32, 32, userOp.nonce);
  hashInto(words, 64, initCodeHex(userOp));
  hashInto(words, 96, strip(userOp.callData));
  writeUint(words, 128, 16, userOp.gas.verificationGasLimit ?? 0n);
  writeUint(words, 144, 16, userOp.gas.callGasLimit ?? 0n);
  writeUint(words, 160, 32, userOp.gas.preVerificationGas ?? 0n);
  writeUint(words, 192, 16, userOp.gas.maxPriorityFeePerGas ?? 0n);
  writeUint(words, 208, 16, userOp.gas.maxFeePerGas ?? 0n);
  hashInto(
    words,
    224,
    strip(paymaster.paymaster) +
      uintHex(16, BigInt(paymaster.paymasterVerificationGasLimit)) +
      uintHex(16, BigInt(paymaster.paymasterPostOpGasLimit)) +
      strip(paymaster.paymasterData),
  );
  return words;
}

function initCodeHex({ factory, factoryData, eip7702Delegate }: SponsorshipUserOperation): string {
  if (factory && EIP7702_MARKERS.has(factory)) {
    return eip7702Delegate
      ? strip(eip7702Delegate) + strip(factoryData ?? '0x')
      : strip(EIP7702_INITCODE_MARKER);
  }
  return factory ? strip(factory) + strip(factoryData ?? '0x') : '';
}

const strip = (hex: Hex): string => hex.slice(2);

function hashInto(target: Buffer, offset: number, bytesHex: string): void {
  Buffer.from(keccak256(`0x${bytesHex}`, 'bytes')).copy(target, offset);
}
