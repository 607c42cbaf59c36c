import { type Address, type Hex, hashTypedData, keccak256, toHex, zeroAddress } from 'viem';
import {
  type ForwarderRefund,
  InvalidForwarderRefundError,
  checkForwarderRefund,
  encodeForwarderRefundCall,
  forwarderRefundDigest,
  forwarderRefundTypedData,
  forwarderRefundTypedDataJson,
  refundIdToBytes32,
  refundIdToUuid,
} from './forwarderRefunds';

const REFUND: ForwarderRefund = {
  chainId: 11155111,
  forwarder: '0x1111111111111111111111111111111111111111',
  token: '0x2222222222222222222222222222222222222222',
  to: '0x3333333333333333333333333333333333333333',
  amount: 2_500_000n,
  refundId: refundIdToBytes32('3f2504e0-4f89-41d3-9a0c-0305e82c3301'),
};

describe('refundIdToBytes32', () => {
  it('maps a refund UUID to its 16 bytes followed by 16 zero bytes, lower-case whatever the input case', () => {
    expect(refundIdToBytes32('3F2504E0-4F89-41D3-9A0C-0305E82C3301')).toBe(
      '0x3f2504e04f8941d39a0c0305e82c330100000000000000000000000000000000',
    );
  });

  it('refundIdToUuid reverses it, and answers undefined for a bytes32 it did not write', () => {
    const uuid = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    expect(refundIdToUuid(refundIdToBytes32(uuid))).toBe(uuid);
    expect(refundIdToUuid(keccak256(toHex(uuid)))).toBeUndefined();
    expect(refundIdToUuid('0x1234')).toBeUndefined();
  });

  it.each(['', '3f2504e04f8941d39a0c0305e82c3301', '3f2504e0-4f89-41d3-9a0c-0305e82c330', 'x'.repeat(36)])(
    'refuses %p, which is not a UUID',
    (refundUuid) => {
      expect(() => refundIdToBytes32(refundUuid)).toThrow(InvalidForwarderRefundError);
      expect(() => refundIdToBytes32(refundUuid)).toThrow(/^Invalid refund refundUuid: .* is not a UUID/);
    },
  );
});

describe('forwarderRefundTypedData', () => {
  it('is the Refund struct in the forwarder clone’s own domain, addresses checksummed', () => {
    const typedData = forwarderRefundTypedData({
      ...REFUND,
      to: REFUND.to.toLowerCase() as Address,
    });
    expect(typedData).toEqual({
      domain: {
        name: 'StablePay Forwarder',
        version: '1',
        chainId: 11155111,
        verifyingContract: REFUND.forwarder,
      },
      types: {
        Refund: [
          { name: 'forwarder', type: 'address' },
          { name: 'token', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'amount', type: 'uint256' },
          { name: 'refundId', type: 'bytes32' },
        ],
      },
      primaryType: 'Refund',
      message: {
        forwarder: REFUND.forwarder,
        token: REFUND.token,
        to: REFUND.to,
        amount: 2_500_000n,
        refundId: REFUND.refundId,
      },
    });
    expect(forwarderRefundDigest(REFUND)).toBe(hashTypedData(typedData));
  });

  it('forwarderRefundTypedDataJson is the eth_signTypedData_v4 JSON of the same struct and domain', () => {
    const json = JSON.parse(forwarderRefundTypedDataJson(REFUND)) as {
      domain: object;
      types: Record<string, unknown>;
      primaryType: string;
      message: object;
    };
    expect(json).toEqual({
      domain: {
        name: 'StablePay Forwarder',
        version: '1',
        chainId: 11155111,
        verifyingContract: REFUND.forwarder,
      },
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        Refund: forwarderRefundTypedData(REFUND).types.Refund,
      },
      primaryType: 'Refund',
      message: {
        forwarder: REFUND.forwarder,
        token: REFUND.token,
        to: REFUND.to,
        amount: '2500000',
        refundId: REFUND.refundId,
      },
    });
    // What a wallet hashes from that JSON is the digest the forwarder checks.
    const { EIP712Domain: _domainType, ...types } = json.types;
    expect(hashTypedData({ ...json, types } as never)).toBe(forwarderRefundDigest(REFUND));
  });

  it('gives a different digest when any field of the struct or the domain changes', () => {
    const digests = new Set<Hex>([forwarderRefundDigest(REFUND)]);
    const variants: Partial<ForwarderRefund>[] = [
      { chainId: 84532 },
      { forwarder: '0x1111111111111111111111111111111111111112' },
      { token: '0x2222222222222222222222222222222222222223' },
      { to: '0x3333333333333333333333333333333333333334' },
      { amount: 2_500_001n },
      { refundId: refundIdToBytes32('3f2504e0-4f89-41d3-9a0c-0305e82c3302') },
    ];
    for (const variant of variants) digests.add(forwarderRefundDigest({ ...REFUND, ...variant }));
    expect(digests.size).toBe(variants.length + 1);
  });
});

describe('checkForwarderRefund', () => {
  it.each<[string, Partial<ForwarderRefund>, RegExp]>([
    ['a zero amount', { amount: 0n }, /^Invalid refund amount: 0 is not a positive uint256/],
    ['a negative amount', { amount: -1n }, /^Invalid refund amount/],
    ['an amount above uint256', { amount: 2n ** 256n }, /^Invalid refund amount/],
    ['the zero address as recipient', { to: zeroAddress }, /^Invalid refund to: the zero address/],
    [
      'a recipient that is not an address',
      { to: '0x1234' as Address },
      /^Invalid refund to: "0x1234" is not an address/,
    ],
    ['a token that is not an address', { token: 'usdc' as Address }, /^Invalid refund token/],
    ['a forwarder that is not an address', { forwarder: '0x' as Address }, /^Invalid refund forwarder/],
    [
      'a refund id that is not 32 bytes',
      { refundId: '0x1234' },
      /^Invalid refund refundId: "0x1234" is not 32 bytes/,
    ],
    ['a chain id of zero', { chainId: 0 }, /^Invalid refund chainId: 0 is not a positive integer/],
    ['a fractional chain id', { chainId: 1.5 }, /^Invalid refund chainId/],
  ])('refuses %s', (_case, variant, message) => {
    expect(() => checkForwarderRefund({ ...REFUND, ...variant })).toThrow(InvalidForwarderRefundError);
    expect(() => checkForwarderRefund({ ...REFUND, ...variant })).toThrow(message);
    expect(() => forwarderRefundTypedData({ ...REFUND, ...variant })).toThrow(message);
    expect(() => encodeForwarderRefundCall({ refund: { ...REFUND, ...variant }, signature: '0x' })).toThrow(
      message,
    );
  });

  it('encodeForwarderRefundCall refuses a signature that is not hex', () => {
    expect(() => encodeForwarderRefundCall({ refund: REFUND, signature: '0xzz' as Hex })).toThrow(
      /^Invalid refund signature: not hex bytes/,
    );
  });
});
