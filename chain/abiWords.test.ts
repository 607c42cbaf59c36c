import { randomBytes } from 'node:crypto';
import { type Hex, encodeAbiParameters, getAddress } from 'viem';
import { uintHex, writeAddress, writeBytes32, writeUint } from './abiWords';

const hex = (bytes: number): Hex => `0x${randomBytes(bytes).toString('hex')}`;

describe('ABI words written into a buffer', () => {
  it("lays out uint256, address and bytes32 words as viem's encodeAbiParameters does", () => {
    for (let i = 0; i < 100; i++) {
      const value = BigInt(hex(1 + (i % 32)));
      const address = getAddress(hex(20));
      const bytes32 = hex(32);
      const words = Buffer.alloc(96);
      writeUint(words, 0, 32, value);
      writeAddress(words, 32, address);
      writeBytes32(words, 64, i % 2 ? bytes32 : Buffer.from(bytes32.slice(2), 'hex'));
      expect(`0x${words.toString('hex')}`).toBe(
        encodeAbiParameters(
          [{ type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }],
          [value, address, bytes32],
        ),
      );
    }
  });

  it('packs two 16-byte halves into one word (accountGasLimits, gasFees)', () => {
    const word = Buffer.alloc(32);
    writeUint(word, 0, 16, 0x1234n);
    writeUint(word, 16, 16, 0xabcdn);
    expect(word.toString('hex')).toBe(`${'0'.repeat(28)}1234${'0'.repeat(28)}abcd`);
  });

  it('refuses what does not fit its width instead of writing into the next word', () => {
    const word = Buffer.alloc(64);
    expect(() => writeUint(word, 0, 16, 2n ** 128n)).toThrow(RangeError);
    expect(() => uintHex(32, -1n)).toThrow(RangeError);
    expect(() => writeAddress(word, 0, '0x1234' as Hex)).toThrow(TypeError);
    expect(() => writeBytes32(word, 0, '0x12' as Hex)).toThrow(RangeError);
    expect(() => writeBytes32(word, 0, new Uint8Array(31))).toThrow(RangeError);
    expect(word.every((byte) => byte === 0)).toBe(true);
  });
});
