import { createHash, randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { GAS_FIELDS, type SponsorshipUserOperation } from './sponsorshipParams';
import { signingRequestFingerprint } from './signingFingerprint';

/** The fingerprint as it was computed before the gas fields' order was sorted once (sorted per request). */
function fingerprintSortedPerRequest(request: Parameters<typeof signingRequestFingerprint>[0]): Hex {
  const { userOp } = request;
  const gas = Object.fromEntries(
    Object.entries(userOp.gas)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([field, value]) => [field, `0x${value.toString(16)}`]),
  );
  const identity = [
    request.chainId,
    request.entryPoint.toLowerCase(),
    request.mode,
    request.token?.toLowerCase() ?? null,
    request.validUntil,
    request.validAfter,
    userOp.sender.toLowerCase(),
    `0x${userOp.nonce.toString(16)}`,
    userOp.callData.toLowerCase(),
    userOp.factory?.toLowerCase() ?? null,
    userOp.factoryData?.toLowerCase() ?? null,
    userOp.eip7702Delegate?.toLowerCase() ?? null,
    gas,
  ];
  return `0x${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`;
}

const hex = (bytes: number): Hex => `0x${randomBytes(bytes).toString('hex')}`;

describe('signingRequestFingerprint', () => {
  test('is the same as sorting the gas fields per request, for every set of fields in any order', () => {
    for (let subset = 0; subset < 1 << GAS_FIELDS.length; subset++) {
      const fields = GAS_FIELDS.filter((_, index) => subset & (1 << index));
      // Twice per set, in two insertion orders: the fingerprint follows neither.
      for (const order of [fields, [...fields].reverse()]) {
        const gas: SponsorshipUserOperation['gas'] = {};
        for (const field of order) gas[field] = BigInt(hex(8));
        const request = {
          chainId: 84532,
          entryPoint: hex(20),
          mode: 'sponsored' as const,
          validUntil: 1_900_000_000,
          validAfter: 1_899_999_000,
          userOp: { sender: hex(20), nonce: BigInt(hex(12)), callData: hex(68), gas },
        };
        expect(signingRequestFingerprint(request)).toBe(fingerprintSortedPerRequest(request));
      }
    }
  });
});
