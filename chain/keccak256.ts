import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { type ByteArray, type Hex, keccak256 as viemKeccak256 } from 'viem';

/**
 * keccak256 with viem's signature, computed by the `keccak` package's native binding (the Keccak
 * reference code, N-API prebuilds) where it loads: 2.5–10× @noble/hashes' JavaScript for the 66–600
 * byte inputs of the paymaster's hashes, which were 7 % of the api's and the signer's CPU under load
 * (docs/performance.md "Paymaster"). Where the binding does not load, viem's own keccak256, the same
 * bytes. keccak256.test.ts checks the two agree.
 */

interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
}

// Keccak-256: rate 1088 bits, capacity 512, the original (pre-SHA-3) padding 0x01.
const RATE = 1088;
const CAPACITY = 512;
const KECCAK_PADDING = 0x01;

let state: KeccakState | null | undefined;

/** One reusable native state (hashing is synchronous, so calls never interleave), or null. */
function nativeState(): KeccakState | null {
  if (state === undefined) {
    try {
      const load = createRequire(__filename);
      // The binding alone: the package's index falls back to JavaScript and wraps each hash in a stream.
      const KeccakState = load('node-gyp-build')(
        dirname(load.resolve('keccak/package.json')),
      ) as new () => KeccakState;
      state = new KeccakState();
    } catch {
      state = null;
    }
  }
  return state;
}

/** Whether the native binding is in use (for the bench's and the log's information). */
export function keccakBackend(): 'native' | 'viem' {
  return nativeState() ? 'native' : 'viem';
}

/** The bytes of a hex string, or undefined where Buffer's decoder would silently differ from viem's (odd length, non-hex). */
function hexToBuffer(hex: Hex): Buffer | undefined {
  if (hex.length % 2 !== 0) return undefined;
  const bytes = Buffer.from(hex.slice(2), 'hex');
  return bytes.length * 2 === hex.length - 2 ? bytes : undefined;
}

export function keccak256(value: Hex | ByteArray): Hex;
export function keccak256(value: Hex | ByteArray, to: 'hex'): Hex;
export function keccak256(value: Hex | ByteArray, to: 'bytes'): ByteArray;
export function keccak256(value: Hex | ByteArray, to: 'hex' | 'bytes' = 'hex'): Hex | ByteArray {
  const native = nativeState();
  const input =
    typeof value === 'string'
      ? hexToBuffer(value)
      : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (!native || !input) return to === 'bytes' ? viemKeccak256(value, 'bytes') : viemKeccak256(value);
  native.initialize(RATE, CAPACITY);
  native.absorb(input);
  native.absorbLastFewBits(KECCAK_PADDING);
  const digest = native.squeeze(32);
  return to === 'bytes' ? new Uint8Array(digest) : `0x${digest.toString('hex')}`;
}
