import {
  type Address,
  type Hex,
  concat,
  getAddress,
  hexToBigInt,
  hexToNumber,
  isHex,
  numberToHex,
  size,
  slice,
  zeroAddress,
} from 'viem';
import type { UserOperation } from 'viem/account-abstraction';
import { ceilDiv } from '../money/ceilDiv';
import { writeAddress, writeBytes32, writeUint } from './abiWords';
import { keccak256 } from './keccak256';

/**
 * The managed paymaster's `paymasterData` (contracts/paymaster/ManagedPaymasterCore.sol, docs/paymaster.md):
 *
 *   mode (1) | validUntil (6) | validAfter (6) | [token (20) | exchangeRate (32)] | signature (65)
 *
 * and the hash its signing service signs. The contract is the authority; this module mirrors it
 * byte for byte (the contract tests compare `sponsorshipHash` with the on-chain `getHash`).
 */

export type PaymasterMode = 'sponsored' | 'erc20';

export const PAYMASTER_MODE_BYTE: Record<PaymasterMode, number> = { sponsored: 0, erc20: 1 };

export const PAYMASTER_SIGNATURE_LENGTH = 65;
/** Total paymasterData length per mode, signature included. */
export const PAYMASTER_DATA_LENGTH: Record<PaymasterMode, number> = {
  sponsored: 1 + 6 + 6 + PAYMASTER_SIGNATURE_LENGTH,
  erc20: 1 + 6 + 6 + 20 + 32 + PAYMASTER_SIGNATURE_LENGTH,
};

/** `exchangeRate` is token base units per this many wei (one ether). */
export const EXCHANGE_RATE_SCALE = 10n ** 18n;
/** Mirrors the contract's POSTOP_OVERHEAD_GAS: the ERC-20 postOp's own gas, charged on top of actualGasCost. */
export const POSTOP_OVERHEAD_GAS = 45_000n;

/** What the signature authorizes, besides the user operation itself. */
export type SponsorshipTerms =
  | { mode: 'sponsored'; validUntil: number; validAfter: number }
  | { mode: 'erc20'; validUntil: number; validAfter: number; token: Address; exchangeRate: bigint };

export type DecodedPaymasterData = SponsorshipTerms & { signature: Hex };

/** The user operation fields the hash covers, in the bundler RPC (unpacked, v0.7/v0.8) shape. */
export type SponsoredUserOperation = Pick<
  UserOperation<'0.7'>,
  | 'sender'
  | 'nonce'
  | 'factory'
  | 'factoryData'
  | 'callData'
  | 'callGasLimit'
  | 'verificationGasLimit'
  | 'preVerificationGas'
  | 'maxFeePerGas'
  | 'maxPriorityFeePerGas'
  | 'paymasterVerificationGasLimit'
  | 'paymasterPostOpGasLimit'
>;

const MAX_UINT48 = 2 ** 48 - 1;

/** Lays out `terms` and `signature` as the contract reads them. */
export function encodePaymasterData(terms: SponsorshipTerms, signature: Hex): Hex {
  if (size(signature) !== PAYMASTER_SIGNATURE_LENGTH) {
    throw new RangeError(
      `paymaster signature must be ${PAYMASTER_SIGNATURE_LENGTH} bytes, got ${size(signature)}`,
    );
  }
  for (const [name, value] of [
    ['validUntil', terms.validUntil],
    ['validAfter', terms.validAfter],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0 || value > MAX_UINT48) {
      throw new RangeError(`${name} must be an integer in 0..2^48-1, got ${value}`);
    }
  }
  const parts: Hex[] = [
    numberToHex(PAYMASTER_MODE_BYTE[terms.mode], { size: 1 }),
    numberToHex(terms.validUntil, { size: 6 }),
    numberToHex(terms.validAfter, { size: 6 }),
  ];
  if (terms.mode === 'erc20') parts.push(terms.token, numberToHex(terms.exchangeRate, { size: 32 }));
  parts.push(signature);
  return concat(parts);
}

/**
 * Reads paymasterData the way the contract does; undefined when the contract would revert on it
 * (unknown mode byte, wrong length for the mode, zero token).
 */
export function decodePaymasterData(data: Hex): DecodedPaymasterData | undefined {
  if (!isHex(data, { strict: true }) || size(data) === 0) return undefined;
  const mode = paymasterModeOf(data);
  if (mode === undefined || size(data) !== PAYMASTER_DATA_LENGTH[mode]) return undefined;
  const validUntil = hexToNumber(slice(data, 1, 7));
  const validAfter = hexToNumber(slice(data, 7, 13));
  const signature = slice(data, size(data) - PAYMASTER_SIGNATURE_LENGTH);
  if (mode === 'sponsored') return { mode, validUntil, validAfter, signature };
  const token = getAddress(slice(data, 13, 33));
  if (token === zeroAddress) return undefined;
  return { mode, validUntil, validAfter, token, exchangeRate: hexToBigInt(slice(data, 33, 65)), signature };
}

/** The mode named by paymasterData's first byte, or undefined for an empty or unknown one. */
export function paymasterModeOf(data: Hex): PaymasterMode | undefined {
  if (!isHex(data, { strict: true }) || size(data) === 0) return undefined;
  const byte = hexToNumber(slice(data, 0, 1));
  return (Object.keys(PAYMASTER_MODE_BYTE) as PaymasterMode[]).find(
    (mode) => PAYMASTER_MODE_BYTE[mode] === byte,
  );
}

export interface SponsorshipHashParameters {
  userOperation: SponsoredUserOperation;
  chainId: number;
  paymaster: Address;
  terms: SponsorshipTerms;
  /**
   * The account's EIP-7702 delegate, for an operation whose initCode starts with the 0x7702 marker
   * (EntryPoint v0.8): the v0.8 paymaster signs over it as the EntryPoint hashes it.
   */
  eip7702Delegate?: Address;
}

/** EntryPoint v0.8 reads an initCode whose first 20 bytes are this marker as an EIP-7702 account. */
export const EIP7702_INITCODE_MARKER: Address = '0x7702000000000000000000000000000000000000';

/** Whether the initCode marks an EIP-7702 operation (its first 20 bytes, zero-padded, are the marker). */
export function isEip7702InitCode(initCode: Hex): boolean {
  if (size(initCode) < 2) return false;
  const start =
    size(initCode) >= 20
      ? slice(initCode, 0, 20)
      : concat([initCode, `0x${'00'.repeat(20 - size(initCode))}`]);
  return start.toLowerCase() === EIP7702_INITCODE_MARKER;
}

/**
 * keccak256(initCode), or for an EIP-7702 initCode the EntryPoint v0.8 override:
 * keccak256(delegate ‖ initCode[20:]) (just the delegate when the initCode is the bare marker).
 */
export function initCodeHash(initCode: Hex, eip7702Delegate: Address | undefined): Hex {
  if (!isEip7702InitCode(initCode)) return keccak256(initCode);
  if (!eip7702Delegate)
    throw new TypeError('an EIP-7702 initCode is hashed over its delegate: pass eip7702Delegate');
  return keccak256(size(initCode) <= 20 ? eip7702Delegate : concat([eip7702Delegate, slice(initCode, 20)]));
}

/**
 * The hash the signing service signs (as an EIP-191 personal message) and the contract's
 * `getHash(userOp, validUntil, validAfter, mode, token, exchangeRate)` returns.
 */
export function sponsorshipHash({
  userOperation,
  chainId,
  paymaster,
  terms,
  eip7702Delegate,
}: SponsorshipHashParameters): Hex {
  // On bytes, as the contract's abi.encode lays them out (chain/abiWords.ts): the signer computes one per
  // signed answer. paymasterData is excluded from the hash (it carries the signature); the gas limits are not.
  const { factory, factoryData } = userOperation;
  const initCode: Hex = factory ? concat([factory, factoryData ?? '0x']) : '0x';
  const fields = Buffer.alloc(256);
  writeAddress(fields, 0, userOperation.sender);
  writeUint(fields, 32, 32, userOperation.nonce);
  writeBytes32(fields, 64, initCodeHash(initCode, eip7702Delegate));
  writeBytes32(fields, 96, keccak256(userOperation.callData, 'bytes'));
  writeUint(fields, 128, 16, userOperation.verificationGasLimit);
  writeUint(fields, 144, 16, userOperation.callGasLimit);
  writeUint(fields, 160, 16, userOperation.paymasterVerificationGasLimit ?? 0n);
  writeUint(fields, 176, 16, userOperation.paymasterPostOpGasLimit ?? 0n);
  writeUint(fields, 192, 32, userOperation.preVerificationGas);
  writeUint(fields, 224, 16, userOperation.maxPriorityFeePerGas);
  writeUint(fields, 240, 16, userOperation.maxFeePerGas);

  const signed = Buffer.alloc(256);
  writeBytes32(signed, 0, keccak256(fields, 'bytes'));
  writeUint(signed, 32, 32, BigInt(chainId));
  writeAddress(signed, 64, paymaster);
  writeUint(signed, 96, 32, BigInt(PAYMASTER_MODE_BYTE[terms.mode]));
  writeUint(signed, 128, 32, uint48(terms.validUntil));
  writeUint(signed, 160, 32, uint48(terms.validAfter));
  writeAddress(signed, 192, terms.mode === 'erc20' ? terms.token : zeroAddress);
  writeUint(signed, 224, 32, terms.mode === 'erc20' ? terms.exchangeRate : 0n);
  return keccak256(signed);
}

/** A uint48 timestamp (the contract's type), refused when it does not fit. */
function uint48(value: number): bigint {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_UINT48)
    throw new RangeError(`${value} does not fit in uint48`);
  return BigInt(value);
}

/** Token base units the contract charges for `gasCostWei` at `exchangeRate` (rounded up). */
export function tokenAmountForGasCost(gasCostWei: bigint, exchangeRate: bigint): bigint {
  return ceilDiv(gasCostWei * exchangeRate, EXCHANGE_RATE_SCALE);
}

/** Floors for the paymaster gas limits the signer signs; an operation may ask for more, never less. */
export const MINIMUM_PAYMASTER_GAS: Record<PaymasterMode, { verification: bigint; postOp: bigint }> = {
  sponsored: { verification: 50_000n, postOp: 0n },
  // ERC-20 validation pre-charges the tokens (a transferFrom that may create the paymaster's balance slot).
  erc20: { verification: 120_000n, postOp: 70_000n },
};
