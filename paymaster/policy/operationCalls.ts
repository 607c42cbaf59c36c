import type { Address, PublicClient } from 'viem';
import type { PaymasterDecisionReads, SponsorshipPolicyRules } from '../../db/paymasterDecisionReads';
import type { Logger } from '../../logging/logger';
import { decodeExecuteCall } from './decodeExecuteCall';
import type { CaveatEnforcers, DelegatedTransfer } from '../delegation/decodeDelegatedTransfer';
import { readDelegatedTransfer } from '../delegation/delegatedTransferWindow';
import { denial } from '../rpc/denials';
import { checkExecutionRules, delegatedTransferCall } from './executionRules';
import { JSON_RPC_ERRORS } from '../rpc/jsonRpc';
import { denyRulesOutcome } from './merchantPolicies';
import { selectSponsorshipPolicy } from './selectSponsorshipPolicy';
import type { SponsorshipRequest } from '../rpc/readSponsorshipRequest';
import { answerDenial, denyWithError, type DeniedAnswer } from '../rpc/sponsorshipAnswer';
import { verifyDelegationSignature } from '../delegation/verifyDelegationSignature';

/*
 * The calls of an operation in the paymaster RPC (steps 10–11 of docs/paymaster.md): what its callData
 * calls, the merchant's deny rules and allowlist over them, the batch rules, and a delegated transfer's
 * owner signature, verified on its chain.
 */

/** What reading the calls needs of the paymaster RPC's dependencies. */
export interface OperationCallsDependencies {
  delegationManagerFor: (chainId: number) => Address;
  /** The caveat enforcers of the Delegation Framework on a chain (recognised in delegated transfers). */
  caveatEnforcersFor: (chainId: number) => CaveatEnforcers | undefined;
  now: () => Date;
}

/** What verifying a delegation's signature needs: the chain's RPC, and a log for an unreadable chain. */
export interface DelegationSignatureDependencies {
  publicClientFor: (chainId: number) => PublicClient | undefined;
  logger: Logger;
}

/** What the operation calls, as decoded from its callData, and the targets the policies look at. */
export interface OperationCalls {
  decoded: ReturnType<typeof decodeExecuteCall>;
  delegationManager: Address;
  /** A single call to the delegation manager: the delegated transfer it redeems, or its denial. */
  delegated: ReturnType<typeof readDelegatedTransfer> | undefined;
  transfer: DelegatedTransfer | undefined;
  /** Every call target (the deny rules'): a delegated transfer's are the manager, then its token. */
  targets: Address[];
  /** A delegated transfer needs its token allowlisted (the manager is the platform's, not the merchant's, to allow). */
  allowlistTargets: Address[];
}

/**
 * callData decoding: the calls, and for a single call to the delegation manager the delegated transfer
 * it redeems (SPEC rule 7), whose owner the deny rules and limits also apply to.
 */
export function readOperationCalls(
  deps: OperationCallsDependencies,
  { chainId, userOp }: SponsorshipRequest,
): OperationCalls {
  const decoded = decodeExecuteCall(userOp.callData);
  const delegationManager = deps.delegationManagerFor(chainId);
  const redemption = decoded.ok ? delegatedTransferCall(decoded.execution, { delegationManager }) : undefined;
  const delegated = redemption ? readDelegatedTransfer(deps, chainId, userOp.sender, redemption) : undefined;
  const transfer = delegated?.ok ? delegated.transfer : undefined;
  const targets = transfer
    ? [delegationManager, transfer.token]
    : decoded.ok
      ? decoded.execution.calls.map((call) => call.target)
      : [];
  return {
    decoded,
    delegationManager,
    delegated,
    transfer,
    targets,
    allowlistTargets: transfer ? [transfer.token] : targets,
  };
}

/**
 * Deny rules before the allowlist (SPEC rule 9): the sender, the delegated owner, every call target;
 * then decoding, the delegated transfer and the batch rules: everything about the calls that holds
 * whichever policy sponsors.
 */
export function checkOperationCalls(
  calls: OperationCalls,
  reads: Pick<PaymasterDecisionReads, 'denyRules'>,
  { chainId, userOp }: Pick<SponsorshipRequest, 'chainId' | 'userOp'>,
): DeniedAnswer | undefined {
  const { decoded, delegated, transfer, delegationManager } = calls;
  const denyRules = denyRulesOutcome(reads.denyRules, {
    chainId,
    sender: userOp.sender,
    ...(transfer && { delegatedOwner: transfer.owner }),
    targets: calls.targets,
  });
  if (!denyRules.ok) return answerDenial(denyRules.denial);
  if (!decoded.ok) {
    return answerDenial(
      denial('paymaster_target_not_allowed', `callData: ${decoded.denial.detail}`, decoded.denial.reason),
    );
  }
  if (delegated && !delegated.ok) return answerDenial(delegated.denial);
  const rules = checkExecutionRules(decoded.execution, { delegationManager });
  if (!rules.ok) return answerDenial(rules.denial);
  return undefined;
}

/**
 * The calls' checks (checkOperationCalls), then the client's policies in order: those whose chains,
 * window and allowlist pass are the candidates, the first whose budgets have room sponsoring
 * (selectSponsorshipPolicy.ts): one denied call denies the whole operation, before signing.
 */
export function checkCallPolicies(
  calls: OperationCalls,
  reads: Pick<PaymasterDecisionReads, 'denyRules' | 'allowlisted' | 'policies'>,
  sponsorship: SponsorshipRequest,
  now: Date,
): DeniedAnswer | { ok: true; candidates: SponsorshipPolicyRules[] } {
  const refused = checkOperationCalls(calls, reads, sponsorship);
  if (refused) return refused;
  const selected = selectSponsorshipPolicy(reads.policies, {
    chainId: sponsorship.chainId,
    allowlistTargets: calls.allowlistTargets,
    sharedAllowlisted: reads.allowlisted,
    now,
  });
  if (!selected.ok) return answerDenial(selected.denial);
  return selected;
}

/** The owner's signature of a delegated transfer's delegation, verified on this chain as the manager will. */
export async function checkDelegationSignature(
  deps: DelegationSignatureDependencies,
  chainId: number,
  transfer: DelegatedTransfer,
  delegationManager: Address,
): Promise<DeniedAnswer | undefined> {
  const signature = await verifyDelegationSignature(deps.publicClientFor(chainId), {
    delegation: transfer.delegation,
    chainId,
    delegationManager,
  });
  if (signature.ok) return undefined;
  if ('unavailable' in signature) {
    deps.logger.error({ chainId, detail: signature.detail }, 'delegation signature could not be verified');
    return denyWithError(
      JSON_RPC_ERRORS.internalError,
      `paymaster_upstream_error: chain ${chainId} could not be read to verify the delegation; retry later`,
      'denied_upstream',
      'delegation_chain_unavailable',
    );
  }
  return answerDenial(
    denial(
      'paymaster_target_not_allowed',
      `delegated transfer: ${signature.detail}`,
      'delegation_signature_invalid',
    ),
  );
}
