import { type Address, type Hex, keccak256, stringToHex } from 'viem';
import type { SponsorshipMode } from '../../db/schema';
import type { SponsorshipUserOperation } from './sponsorshipParams';

/**
 * The identity of a signing request: the operation's fields that the signature covers, the chain,
 * entry point, gas mode, token and validity window. The signing service is deterministic, so two
 * requests with one fingerprint get the same paymaster data and the same userOpHash; the RPC finds a
 * repeat by it before consuming any limit (db/paymasterUsage.ts `findSignedResult`).
 */
export function signingRequestFingerprint({
  chainId,
  entryPoint,
  mode,
  token,
  validUntil,
  validAfter,
  userOp,
}: {
  chainId: number;
  entryPoint: Address;
  mode: SponsorshipMode;
  token?: Address;
  validUntil: number;
  validAfter: number;
  userOp: SponsorshipUserOperation;
}): Hex {
  const gas = Object.fromEntries(
    Object.entries(userOp.gas)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([field, value]) => [field, `0x${value.toString(16)}`]),
  );
  const identity = [
    chainId,
    entryPoint.toLowerCase(),
    mode,
    token?.toLowerCase() ?? null,
    validUntil,
    validAfter,
    userOp.sender.toLowerCase(),
    `0x${userOp.nonce.toString(16)}`,
    userOp.callData.toLowerCase(),
    userOp.factory?.toLowerCase() ?? null,
    userOp.factoryData?.toLowerCase() ?? null,
    userOp.eip7702Delegate?.toLowerCase() ?? null,
    gas,
  ];
  return keccak256(stringToHex(JSON.stringify(identity)));
}
