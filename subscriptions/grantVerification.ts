import { type Address, type Hex, type PublicClient, hexToBigInt, size, slice } from 'viem';
import type { DelegationFrameworkContracts } from '../chain/delegationFramework';
import { ROOT_AUTHORITY, type Delegation } from '../chain/delegations';
import {
  decodePeriodTransferTerms,
  readPeriodAllowance,
  type PeriodTransferTerms,
} from '../chain/periodicTransfers';
import { verifyDelegationSignature } from '../paymaster/delegation/verifyDelegationSignature';

/**
 * Whether a customer's signed delegation is exactly the permission a plan asks for (issue 42, DESIGN
 * §9.2), judged before any subscription exists: a root delegation from the customer's account to our
 * subscription executor bound by the ERC20PeriodTransferEnforcer for the plan's token, amount per
 * period and period length (and at most an expiry, not yet passed), starting no later than now plus a day (the subscribe page signs
 * "now"), with a valid signature, not revoked. Anything else is refused with one sentence the customer
 * (and the merchant's support) can act on.
 */

export interface ExpectedGrant {
  chainId: number;
  token: Address;
  /** The plan's amount in the token's base units. */
  periodAmount: bigint;
  periodDuration: bigint;
  executor: Address;
  /** Unix seconds. */
  now: bigint;
}

export type GrantVerdict =
  | { ok: true; terms: PeriodTransferTerms }
  | { ok: false; reason: string }
  /** The chain could not be read: no verdict, try again. */
  | { ok: false; unavailable: true; reason: string };

/** A start this far ahead is refused: the page signs the current time. */
const START_TOLERANCE_SECONDS = 86_400n;

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The checks that need no chain: shape, delegate, caveat and terms. */
export function judgeGrantTerms(
  delegation: Delegation,
  expected: ExpectedGrant,
  framework: DelegationFrameworkContracts,
): GrantVerdict {
  if (!same(delegation.authority, ROOT_AUTHORITY)) {
    return {
      ok: false,
      reason: 'The permission must be granted by the customer account itself (a root delegation)',
    };
  }
  if (!same(delegation.delegate, expected.executor)) {
    return {
      ok: false,
      reason: `The permission is granted to ${delegation.delegate}, not to the subscription executor ${expected.executor}`,
    };
  }
  const periodCaveats = delegation.caveats.filter((caveat) =>
    same(caveat.enforcer, framework.erc20PeriodTransferEnforcer),
  );
  const expiryCaveats = delegation.caveats.filter((caveat) =>
    same(caveat.enforcer, framework.timestampEnforcer),
  );
  if (
    periodCaveats.length !== 1 ||
    expiryCaveats.length > 1 ||
    delegation.caveats.length !== 1 + expiryCaveats.length
  ) {
    return {
      ok: false,
      reason:
        'The permission must carry exactly one ERC20PeriodTransferEnforcer caveat of this chain (erc20-token-periodic), at most one expiry (TimestampEnforcer) and nothing else',
    };
  }
  const expiry = expiryCaveats[0] && decodeExpiry(expiryCaveats[0].terms);
  if (expiryCaveats[0] && !expiry)
    return { ok: false, reason: 'The expiry terms are malformed (32 bytes expected)' };
  if (expiry && expiry.validBefore !== 0n && expiry.validBefore <= expected.now) {
    return {
      ok: false,
      reason: `The permission expired at ${new Date(Number(expiry.validBefore) * 1000).toISOString()}`,
    };
  }
  if (expiry && expiry.validAfter > expected.now + START_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'The permission starts more than a day from now' };
  }
  const terms = decodePeriodTransferTerms(periodCaveats[0]!.terms);
  if (!terms) return { ok: false, reason: 'The periodic transfer terms are malformed (116 bytes expected)' };
  if (!same(terms.token, expected.token)) {
    return {
      ok: false,
      reason: `The permission is for token ${terms.token}, not ${expected.token} on chain ${expected.chainId}`,
    };
  }
  if (terms.periodAmount !== expected.periodAmount) {
    return {
      ok: false,
      reason: `The permission allows ${terms.periodAmount} base units per period; the plan charges exactly ${expected.periodAmount}`,
    };
  }
  if (terms.periodDuration !== expected.periodDuration) {
    return {
      ok: false,
      reason: `The permission's period is ${terms.periodDuration} seconds; the plan's is ${expected.periodDuration}`,
    };
  }
  if (terms.startTime > expected.now + START_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'The permission starts more than a day from now' };
  }
  return { ok: true, terms };
}

/** Every check: the terms, then the signature as the manager checks it and revocation, on the chain. */
export async function verifySubscriptionGrant(
  client: PublicClient | undefined,
  delegation: Delegation,
  expected: ExpectedGrant,
  framework: DelegationFrameworkContracts,
): Promise<GrantVerdict> {
  const verdict = judgeGrantTerms(delegation, expected, framework);
  if (!verdict.ok) return verdict;
  const periodCaveat = delegation.caveats.find((caveat) =>
    same(caveat.enforcer, framework.erc20PeriodTransferEnforcer),
  )!;
  const signature = await verifyDelegationSignature(client, {
    delegation,
    chainId: expected.chainId,
    delegationManager: framework.delegationManager,
  });
  if (!signature.ok) {
    return 'unavailable' in signature
      ? { ok: false, unavailable: true, reason: signature.detail }
      : { ok: false, reason: `The permission's signature is not valid: ${signature.detail}` };
  }
  const allowance = await readPeriodAllowance(client!, {
    framework,
    delegation,
    caveat: periodCaveat,
  }).catch(() => undefined);
  if (!allowance)
    return { ok: false, unavailable: true, reason: `chain ${expected.chainId} could not be read` };
  if (allowance.revoked) return { ok: false, reason: 'The permission was revoked on chain' };
  return verdict;
}

/** TimestampEnforcer terms: valid after (uint128) ‖ valid before (uint128), unix seconds, 0 = unbounded. */
export function decodeExpiry(terms: Hex): { validAfter: bigint; validBefore: bigint } | undefined {
  if (size(terms) !== 32) return undefined;
  return { validAfter: hexToBigInt(slice(terms, 0, 16)), validBefore: hexToBigInt(slice(terms, 16, 32)) };
}
