import { type Address, getAddress } from 'viem';
import {
  InvalidDepositParameterError,
  InvalidSessionIdError,
  predictDepositAddress,
  sessionIdToBytes16,
} from './depositAddress';

/**
 * Pinned vectors: the derivation is final, so these must never change for a given factory. They were
 * produced by `ForwarderFactory.predict` itself, deployed at `factory` (owner: anvil dev account 0, with its
 * implementation at `implementation`) on anvil chains with these ids; test/chain/forwarder.test.ts repeats
 * the comparison for random sessions. (Re-pinned once when the factory gained its owner and settlement:
 * that moved the factory, hence every address; the derivation itself did not change.)
 */
const PINNED = {
  factory: '0x23666a01F6c2982d99D0C2e89EAF2DE96053FeE1',
  implementation: '0x2044bD23a83fCCadD8F8e9296252adE5a5Fca64e',
  sessionId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  merchant: '0x1111111111111111111111111111111111111111',
} as const satisfies Record<string, string>;

const PINNED_ADDRESSES: [chainId: number, depositAddress: Address][] = [
  [1, '0xC1a32fcb111c083E6F6da65B526D7c0EE5Eab528'],
  [8453, '0xFa83578862dcab408c3A5186ACd9d7E7B7b85Bb0'],
  [42161, '0x5Ec895fE01DD0a4D0590b56FF80a106D09E71a0D'],
  [31337, '0x271FC175595c91929D437cbd162aE9B0f9ad85a6'],
];

describe('sessionIdToBytes16', () => {
  it('turns a session UUID into the bytes16 the contracts take', () => {
    expect(sessionIdToBytes16('3f2504e0-4f89-41d3-9a0c-0305e82c3301')).toBe(
      '0x3f2504e04f8941d39a0c0305e82c3301',
    );
  });

  it('accepts upper-case UUIDs and answers lower-case hex', () => {
    expect(sessionIdToBytes16('3F2504E0-4F89-41D3-9A0C-0305E82C3301')).toBe(
      '0x3f2504e04f8941d39a0c0305e82c3301',
    );
  });

  it.each([
    '',
    '3f2504e04f8941d39a0c0305e82c3301',
    '{3f2504e0-4f89-41d3-9a0c-0305e82c3301}',
    '3f2504e0-4f89-41d3-9a0c-0305e82c330',
    '3f2504e0-4f89-41d3-9a0c-0305e82c33011',
    '3g2504e0-4f89-41d3-9a0c-0305e82c3301',
    ' 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  ])('refuses %p, which is not a UUID', (sessionId) => {
    expect(() => sessionIdToBytes16(sessionId)).toThrow(InvalidSessionIdError);
  });
});

describe('predictDepositAddress', () => {
  it.each(PINNED_ADDRESSES)('on chain %i gives the pinned address %s', (chainId, depositAddress) => {
    expect(predictDepositAddress({ ...PINNED, chainId })).toBe(depositAddress);
  });

  it('answers a checksummed address whatever the case of its inputs', () => {
    const lower = predictDepositAddress({
      factory: PINNED.factory.toLowerCase() as Address,
      implementation: PINNED.implementation.toLowerCase() as Address,
      sessionId: PINNED.sessionId.toUpperCase(),
      merchant: PINNED.merchant,
      chainId: 1,
    });
    expect(lower).toBe(PINNED_ADDRESSES[0]![1]);
    expect(lower).toBe(getAddress(lower));
  });

  it('differs for another session, merchant, factory or implementation', () => {
    const base = predictDepositAddress({ ...PINNED, chainId: 1 });
    const variants = [
      { sessionId: '3f2504e0-4f89-41d3-9a0c-0305e82c3302' },
      { merchant: '0x1111111111111111111111111111111111111112' as Address },
      { factory: '0x23666a01F6c2982d99D0C2e89EAF2DE96053FeE2' as Address },
      { implementation: '0x2044bD23a83fCCadD8F8e9296252adE5a5Fca64f' as Address },
    ];
    const addresses = variants.map((variant) => predictDepositAddress({ ...PINNED, chainId: 1, ...variant }));
    expect(new Set([base, ...addresses]).size).toBe(variants.length + 1);
  });

  it('refuses the zero merchant, which the factory refuses too', () => {
    expect(() =>
      predictDepositAddress({
        ...PINNED,
        chainId: 1,
        merchant: '0x0000000000000000000000000000000000000000',
      }),
    ).toThrow(InvalidDepositParameterError);
  });

  it.each([0, -1, 1.5, Number.NaN, 2 ** 53])('refuses chain id %p', (chainId) => {
    expect(() => predictDepositAddress({ ...PINNED, chainId })).toThrow(InvalidDepositParameterError);
  });

  it('refuses a malformed address and a malformed session id', () => {
    expect(() => predictDepositAddress({ ...PINNED, chainId: 1, factory: '0x1234' })).toThrow(
      InvalidDepositParameterError,
    );
    expect(() => predictDepositAddress({ ...PINNED, chainId: 1, sessionId: 'session-1' })).toThrow(
      InvalidSessionIdError,
    );
  });
});
