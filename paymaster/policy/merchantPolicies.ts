import type { Address } from 'viem';
import type { Db } from '../../db/client';
import { findAllowlistedAddresses, findMatchingDenyRules } from '../../db/paymasterPolicies';
import { PASSED, denied, type CheckOutcome } from '../rpc/denials';

/**
 * The merchant's own policies on a chain: deny rules (checked first, SPEC rule 9) block the sender,
 * the owner whose tokens a delegated transfer moves (rule 7; a sender rule on its address), or any call target; then every call target must be on the contract allowlist (default: none is).
 * A denied call is named by its zero-based index.
 */

export async function checkDenyRules(
  db: Db,
  {
    merchantId,
    chainId,
    sender,
    delegatedOwner,
    targets,
  }: { merchantId: string; chainId: number; sender: Address; delegatedOwner?: Address; targets: Address[] },
): Promise<CheckOutcome> {
  const rules = await findMatchingDenyRules(db, {
    merchantId,
    chainId,
    senders: [sender.toLowerCase(), ...(delegatedOwner ? [delegatedOwner.toLowerCase()] : [])],
    targets: targets.map((target) => target.toLowerCase()),
  });
  return denyRulesOutcome(rules, { chainId, sender, ...(delegatedOwner && { delegatedOwner }), targets });
}

/** The deny-rule decision over the rules that match the operation (read by the caller). */
export function denyRulesOutcome(
  rules: { kind: 'sender' | 'target'; address: string }[],
  {
    chainId,
    sender,
    delegatedOwner,
    targets,
  }: { chainId: number; sender: Address; delegatedOwner?: Address; targets: Address[] },
): CheckOutcome {
  const lowerTargets = targets.map((target) => target.toLowerCase());
  if (rules.length === 0) return PASSED;
  const blockedAccounts = new Set(rules.filter((rule) => rule.kind === 'sender').map((rule) => rule.address));
  if (blockedAccounts.has(sender.toLowerCase())) {
    return denied(
      'paymaster_blocked_by_merchant_rule',
      `sender ${sender} is blocked by a deny rule on chain ${chainId}`,
      'sender_denied',
    );
  }
  if (delegatedOwner && blockedAccounts.has(delegatedOwner.toLowerCase())) {
    return denied(
      'paymaster_blocked_by_merchant_rule',
      `delegated owner ${delegatedOwner} is blocked by a deny rule on chain ${chainId}`,
      'delegated_owner_denied',
    );
  }
  const blockedTargets = new Set(rules.filter((rule) => rule.kind === 'target').map((rule) => rule.address));
  const index = lowerTargets.findIndex((target) => blockedTargets.has(target));
  return denied(
    'paymaster_blocked_by_merchant_rule',
    `call ${index}: target ${targets[index]} is blocked by a deny rule on chain ${chainId}`,
    'target_denied',
  );
}

export async function checkAllowlist(
  db: Db,
  { merchantId, chainId, targets }: { merchantId: string; chainId: number; targets: Address[] },
): Promise<CheckOutcome> {
  const allowed = await findAllowlistedAddresses(db, {
    merchantId,
    chainId,
    addresses: targets.map((target) => target.toLowerCase()),
  });
  return allowlistOutcome(allowed, { chainId, targets });
}

/** The allowlist decision over the operation's targets that are allowlisted (read by the caller). */
export function allowlistOutcome(
  allowed: Set<string>,
  { chainId, targets }: { chainId: number; targets: Address[] },
): CheckOutcome {
  const lowerTargets = targets.map((target) => target.toLowerCase());
  const index = lowerTargets.findIndex((target) => !allowed.has(target));
  if (index === -1) return PASSED;
  return denied(
    'paymaster_target_not_allowed',
    `call ${index}: target ${targets[index]} is not on the contract allowlist for chain ${chainId}`,
    'target_not_allowlisted',
  );
}
