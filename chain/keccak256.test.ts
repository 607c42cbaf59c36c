import { randomBytes } from 'node:crypto';
import { bytesToHex, keccak256 as viemKeccak256 } from 'viem';
import { keccak256, keccakBackend } from './keccak256';

describe('keccak256 (native binding)', () => {
  it('loads the native binding on this machine (linux-x64 prebuild)', () => {
    expect(keccakBackend()).toBe('native');
  });

  it('agrees with viem for hex and bytes of every length around the rate (136 bytes)', () => {
    for (const length of [0, 1, 31, 32, 33, 66, 135, 136, 137, 271, 272, 273, 600, 4096]) {
      const bytes = new Uint8Array(randomBytes(length));
      const hex = bytesToHex(bytes);
      expect(keccak256(hex)).toBe(viemKeccak256(hex));
      expect(keccak256(bytes)).toBe(viemKeccak256(bytes));
      expect(keccak256(hex, 'bytes')).toEqual(viemKeccak256(hex, 'bytes'));
    }
  });

  it('hashes a view into a larger buffer over the view only', () => {
    const whole = new Uint8Array(randomBytes(100));
    const view = whole.subarray(10, 50);
    expect(keccak256(view)).toBe(viemKeccak256(view));
  });

  it('reads odd-length and upper-case hex as viem does', () => {
    expect(keccak256('0x123')).toBe(viemKeccak256('0x123'));
    expect(keccak256('0xABCDEF')).toBe(viemKeccak256('0xabcdef'));
  });

  it('returns a fresh digest each call (the native state is reused, its output is not)', () => {
    const first = keccak256('0x01', 'bytes');
    const copy = new Uint8Array(first);
    keccak256('0x02', 'bytes');
    expect(first).toEqual(copy);
  });
});
