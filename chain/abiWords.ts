import type { Address, Hex } from 'viem';

/**
 * ABI words written straight into a buffer, for the paymaster's hashes over static words only (the
 * userOpHash and the sponsorship hash): what `encodeAbiParameters` produces for uintN, address and
 * bytes32, without its hex round trips on every signed answer. A value that does not fit its width is
 * refused (RangeError, as viem's pad refuses it), never written into the next word.
 */

/** An unsigned integer as `bytes` bytes of big-endian hex (no 0x). */
export function uintHex(bytes: number, value: bigint): string {
  const hex = value.toString(16);
  if (value < 0n || hex.length > bytes * 2) throw new RangeError(`${value} does not fit in uint${bytes * 8}`);
  return hex.padStart(bytes * 2, '0');
}

/** `value` as `bytes` big-endian bytes at `offset` (a uint256 word is 32; a packed half of one, 16). */
export function writeUint(target: Buffer, offset: number, bytes: number, value: bigint): void {
  target.write(uintHex(bytes, value), offset, bytes, 'hex');
}

/** An address as the word at `offset` (left-padded with 12 zero bytes). */
export function writeAddress(target: Buffer, offset: number, address: Address): void {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new TypeError(`${address} is not a 20-byte address`);
  target.write(address.slice(2), offset + 12, 20, 'hex');
}

/** 32 bytes of hex (a bytes32 value, a hash) as the word at `offset`. */
export function writeBytes32(target: Buffer, offset: number, value: Hex | Uint8Array): void {
  if (typeof value !== 'string') {
    if (value.length !== 32) throw new RangeError(`bytes32 needs 32 bytes, got ${value.length}`);
    target.set(value, offset);
    return;
  }
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) throw new RangeError(`${value} is not 32 bytes of hex`);
  target.write(value.slice(2), offset, 32, 'hex');
}
