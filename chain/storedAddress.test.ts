import { getAddress } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { storedAddressForDisplay } from './storedAddress';

describe('storedAddressForDisplay', () => {
  it('answers the EIP-55 form of a stored lower-case address, the same on a repeat', () => {
    for (let i = 0; i < 50; i++) {
      const { address } = privateKeyToAccount(generatePrivateKey());
      const stored = address.toLowerCase();
      expect(storedAddressForDisplay(stored)).toBe(address);
      expect(storedAddressForDisplay(stored)).toBe(address);
    }
    // EIP-55's own test vector.
    expect(storedAddressForDisplay('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')).toBe(
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    );
  });

  it('refuses what is not an address, as getAddress does, and caches nothing for it', () => {
    expect(() => storedAddressForDisplay('0x1234')).toThrow(/Address "0x1234" is invalid/);
    expect(() => storedAddressForDisplay('0x1234')).toThrow(/is invalid/);
  });

  it('keeps answering right past its capacity (the oldest entries go first)', () => {
    const addresses = Array.from({ length: 70_000 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);
    for (const stored of addresses) storedAddressForDisplay(stored);
    for (const stored of [addresses[0]!, addresses[69_999]!]) {
      expect(storedAddressForDisplay(stored)).toBe(getAddress(stored));
    }
  });
});
