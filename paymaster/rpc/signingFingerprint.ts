import { createHash } from 'node:crypto';
import type { Address, Hex } from 'viem';
import type { SponsorshipMode } from '../../db/schema';
import { GAS_FIELDS, type SponsorshipUserOperation } from './sponsorshipParams';

/**
 * The gas fields in the fingerprint's order (`localeCompare`), sorted once: sorting each request's fields
 * through ICU was about 2 % of the api's CPU per signed answer.
 */
const GAS_FIELDS_IN_FINGERPRINT_ORDER = [...GAS_FIELDS].sort((a, b) => a.localeCompare(b));

/**
 * The identity of a signing request: the operation's fields that the signature covers, the chain,
 * entry point, gas mode, token and validity window. The signing service is deterministic, so two
 * requests with one fingerprint get the same paymaster data and the same userOpHash; the RPC finds a
 * repeat by it before consuming any limit (`record_signed_paymaster_operation`, migration
 * 2026_11_29_0901). SHA-256 of node:crypto (issue 46): a fingerprint is only ever compared with those of
 * requests in the same second, and keccak in JavaScript was 5 % of the api's busy time per signed answer;
 * a repeat across a release that changed the hash is still found by its userOpHash.
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
  const gas: Record<string, string> = {};
  for (const field of GAS_FIELDS_IN_FINGERPRINT_ORDER) {
    const value = userOp.gas[field];
    if (value !== undefined) gas[field] = `0x${value.toString(16)}`;
  }
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
  return `0x${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`;
}
