import type { Address, Hex } from 'viem';
import {
  type CaveatEnforcers,
  type DelegatedTransfer,
  decodeDelegatedTransfer,
} from './decodeDelegatedTransfer';
import { denial, type PaymasterDenial } from '../rpc/denials';

/**
 * A delegated transfer (SPEC rule 7) in the paymaster RPC: the transfer a call redeems, the window its
 * paymaster data may have, and the usage reason that names the owner.
 */

/** The usage reason of a delegated transfer: `delegated_by:<owner>` (lower-case address). */
export const delegatedByReason = (owner: Address): string => `delegated_by:${owner.toLowerCase()}`;

/** The delegated transfer a single call to the delegation manager redeems, or its denial. */
export function readDelegatedTransfer(
  deps: {
    /** The caveat enforcers of the Delegation Framework on a chain (recognised in delegated transfers). */
    caveatEnforcersFor: (chainId: number) => CaveatEnforcers | undefined;
    now: () => Date;
  },
  chainId: number,
  sender: Address,
  call: { data: Hex; value: bigint },
): { ok: true; transfer: DelegatedTransfer } | { ok: false; denial: PaymasterDenial } {
  const enforcers = deps.caveatEnforcersFor(chainId);
  if (!enforcers) {
    return {
      ok: false,
      denial: denial(
        'paymaster_target_not_allowed',
        `delegated transfer: chain ${chainId} has no known Delegation Framework deployment`,
        'delegation_framework_unknown',
      ),
    };
  }
  const outcome = decodeDelegatedTransfer(call, {
    sender,
    enforcers,
    now: BigInt(Math.floor(deps.now().getTime() / 1000)),
  });
  if (outcome.ok) return outcome;
  return {
    ok: false,
    denial: denial(
      'paymaster_target_not_allowed',
      `delegated transfer: ${outcome.denial.detail}`,
      outcome.denial.reason,
    ),
  };
}

/**
 * A delegated transfer's paymaster data never outlives its delegation: validUntil is at most the last
 * second before the TimestampEnforcer's expiry, so an operation the delegation would revert on chain
 * fails the EntryPoint's validity window before it can cost gas.
 */
export function delegatedWindow(
  window: { validAfter: number; validUntil: number },
  transfer: DelegatedTransfer | undefined,
): { validAfter: number; validUntil: number } {
  if (!transfer) return window;
  const lastValidSecond = Number(transfer.expiresAt) - 1;
  return lastValidSecond < window.validUntil ? { ...window, validUntil: lastValidSecond } : window;
}
