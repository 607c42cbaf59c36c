import { type Address, type PublicClient } from 'viem';
import type { Logger } from '../../logging/logger';
import type { EntryPointVersion } from '../../chain/entryPoints';
import type { Db } from '../../db/client';
import { readPaymasterDecisionInputs } from '../../db/paymasterDecisionReads';
import { findSignedResult } from '../../db/paymasterUsage';
import type { StoredPaymasterResult } from '../../db/schema';
import { cachedDecisionReads, type MerchantConfigs } from '../policy/merchantConfigCache';
import { checkChainAllowed, checkPrepaidBalance, type PaymasterClient } from '../policy/clientChecks';
import { PAYMASTER_DENIALS, describeDenialForRpc } from './denials';
import { type CaveatEnforcers } from '../delegation/decodeDelegatedTransfer';
import {
  JSON_RPC_ERRORS,
  jsonRpcError,
  jsonRpcResult,
  parseJsonRpcEnvelope,
  type JsonRpcRequestEnvelope,
  type JsonRpcResponse,
} from './jsonRpc';
import type { SponsorshipLimitOutcome, SponsorshipLimits } from '../limits/limits';
import type { ChainClocks } from '../../chain/chainClock';
import type { SponsorshipPolicyRules } from '../../db/paymasterDecisionReads';
import type { SignerClient } from './signerClient';
import { peekRequestedChainId } from './sponsorshipParams';
import { signingRequestFingerprint } from './signingFingerprint';
import { sponsorshipWindow } from './sponsorshipWindow';
import { buildStubPaymasterResult } from './stubPaymasterData';
import { NO_USAGE_FACTS, recordPaymasterDenial, type UsageFacts } from './usageRecords';
import { delegatedWindow } from '../delegation/delegatedTransferWindow';
import { readSponsorshipRequest, type SponsorshipRequest } from './readSponsorshipRequest';
import { answerDenial, denyWithError, type DeniedAnswer, type SponsorshipAnswer } from './sponsorshipAnswer';
import { signAndRecord, type SigningDependencies } from './signAndRecord';
import { approveSponsorship } from './approveSponsorship';
import {
  answerValidateSponsorshipPolicies,
  DRY_RUN_METHOD,
  type DryRunRate,
} from './validateSponsorshipPolicies';
import type { ApprovalDependencies } from '../policy/approvalWebhook';
import { boundSignedOperation, type OperationBounds, type SignedGas } from './boundSignedOperation';
import {
  checkCallPolicies,
  checkDelegationSignature,
  readOperationCalls,
  type OperationCalls,
} from '../policy/operationCalls';

/**
 * The paymaster JSON-RPC (`POST /v1/paymaster/rpc`) after the client id and Origin were accepted:
 * every check in SPEC's order (docs/paymaster.md "Order of checks"), then stub data or the signing service, and a usage row
 * for every denial and every signed operation. Never throws: an unexpected failure answers -32603.
 *
 * Order: chain (HTTP 403) → JSON-RPC shape → method → params → chain and key class → entry point →
 * gas fields → token → gas mode → deny rules (sender, delegated owner, every call target) → callData
 * decoding (a delegated transfer's delegation included) and allowlist → the owner's signature of a
 * delegated transfer, on its chain → prepaid balance → sponsorship limits (paymaster/limits/limits.ts, the
 * delegated owner's per-account limits with the sender's), then the candidate policies' budgets, by the
 * chain's time (paymaster/limits/policyBudgets.ts) → the sponsoring policy's approval webhook
 * (approveSponsorship.ts) → signer → usage row.
 */

export interface PaymasterRpcDependencies {
  db: Db;
  signer: SignerClient;
  /** Our paymaster contract on a chain for an EntryPoint release, from the deployments. */
  paymasterFor: (chainId: number, entryPointVersion: EntryPointVersion) => Address | undefined;
  delegationManagerFor: (chainId: number) => Address;
  /** The caveat enforcers of the Delegation Framework on a chain (recognised in delegated transfers). */
  caveatEnforcersFor: (chainId: number) => CaveatEnforcers | undefined;
  /** A chain's RPC, to verify the owner's signature of a delegated transfer there. */
  publicClientFor: (chainId: number) => PublicClient | undefined;
  /** The chains' latest block times, which policy budget periods start by; read only for a policy with budgets. */
  chainClocks?: ChainClocks;
  now: () => Date;
  logger: Logger;
  /** Sponsorship limits and prices; a request that reaches the limits step without them answers -32603. */
  limits?: SponsorshipLimits;
  /** Bounds on a signed operation's gas and fees (against the chain's current fees); needed to sign. */
  bounds?: OperationBounds;
  /** Prices user-paid gas (the token's rate and the client's per-operation cap); needed to sign ERC-20 data. */
  userPaidPricer?: SigningDependencies['userPaidPricer'];
  /** Sends approval requests (policies with an approval webhook); needed to sign for such a policy. */
  approvals?: ApprovalDependencies;
  /** The client's budget of dry runs (pm_validateSponsorshipPolicies); none: unlimited (benchmarks). */
  dryRuns?: DryRunRate;
  /**
   * The merchants' paymaster configuration cached per process (merchantConfigCache.ts): the decision reads
   * without a round trip, the repeat of a signed request found by the recording. None: read per request.
   */
  merchantConfigs?: MerchantConfigs;
}

export type PaymasterRpcOutcome =
  /** Denied before the JSON-RPC request was read: the route answers with the denial's HTTP status. */
  { kind: 'http'; status: number; message: string } | { kind: 'jsonrpc'; response: JsonRpcResponse };

/** The caller's method name, bounded: the -32601 answer repeats it; a usage row stores only known names (usageRecords.ts). */
const methodForUsage = (method: unknown): string | null =>
  typeof method === 'string' ? method.slice(0, 64) : null;

const methodOf = (body: unknown): string | null =>
  typeof body === 'object' && body !== null ? methodForUsage((body as { method?: unknown }).method) : null;

export async function handlePaymasterRpc(
  deps: PaymasterRpcDependencies,
  { client, body }: { client: PaymasterClient; body: unknown },
): Promise<PaymasterRpcOutcome> {
  // A dry run consumes and records nothing, not even a refused chain's usage row: its own answer.
  if (methodOf(body) === DRY_RUN_METHOD) {
    const envelope = parseJsonRpcEnvelope(body);
    if (envelope.ok) return { kind: 'jsonrpc', response: await answerDryRun(deps, client, envelope.request) };
  }
  // The client check answers HTTP 403 for a chain outside allowedChainIds before the JSON-RPC
  // request is examined (SPEC); the JSON-RPC stage re-checks it.
  const requestedChainId = peekRequestedChainId(body);
  if (requestedChainId !== undefined) {
    const chain = checkChainAllowed(client, requestedChainId);
    if (!chain.ok) {
      const facts: UsageFacts = { ...NO_USAGE_FACTS, method: methodOf(body), chainId: requestedChainId };
      await recordPaymasterDenial(
        deps,
        client,
        facts,
        'denied_chain',
        chain.denial.reason ?? chain.denial.code,
      );
      return {
        kind: 'http',
        status: PAYMASTER_DENIALS[chain.denial.code].httpStatus!,
        message: describeDenialForRpc(chain.denial),
      };
    }
  }
  return { kind: 'jsonrpc', response: await answerJsonRpcRequest(deps, { client, body }) };
}

/** pm_validateSponsorshipPolicies (validateSponsorshipPolicies.ts); never throws. */
async function answerDryRun(
  deps: PaymasterRpcDependencies,
  client: PaymasterClient,
  request: JsonRpcRequestEnvelope,
): Promise<JsonRpcResponse> {
  try {
    return await answerValidateSponsorshipPolicies(deps, client, request);
  } catch (error) {
    deps.logger.error({ err: error, clientId: client.clientId }, 'paymaster dry run failed');
    return jsonRpcError(request.id, { code: JSON_RPC_ERRORS.internalError, message: 'Internal error' });
  }
}

/** The JSON-RPC stage on its own: every answer from -32700 on, with HTTP 200. */
export async function answerJsonRpcRequest(
  deps: PaymasterRpcDependencies,
  { client, body }: { client: PaymasterClient; body: unknown },
): Promise<JsonRpcResponse> {
  const facts: UsageFacts = { ...NO_USAGE_FACTS, method: methodOf(body) };
  const envelope = parseJsonRpcEnvelope(body);
  if (!envelope.ok) {
    await recordPaymasterDenial(deps, client, facts, 'denied_malformed', 'parse_error');
    return jsonRpcError(null, {
      code: JSON_RPC_ERRORS.parseError,
      message: `Parse error: ${envelope.detail}`,
    });
  }
  const { id } = envelope.request;

  let answer: SponsorshipAnswer;
  try {
    answer = await decideSponsorship(deps, client, envelope.request, facts);
  } catch (error) {
    deps.logger.error({ err: error, clientId: client.clientId }, 'paymaster rpc failed');
    answer = denyWithError(JSON_RPC_ERRORS.internalError, 'Internal error', null, null);
  }
  if (answer.ok) return jsonRpcResult(id, answer.result);

  const { denial } = answer;
  if (denial.usageStatus) await recordPaymasterDenial(deps, client, facts, denial.usageStatus, denial.reason);
  return jsonRpcError(id, denial.error);
}

/** The steps of docs/paymaster.md's check order after the JSON-RPC envelope, each a named function. */
async function decideSponsorship(
  deps: PaymasterRpcDependencies,
  client: PaymasterClient,
  request: { method: string; params: unknown[] },
  facts: UsageFacts,
): Promise<SponsorshipAnswer> {
  // The request's shape: method, params, chain and key class, entry point, EIP-7702, gas fields, token, gas mode.
  const read = readSponsorshipRequest(client, request, facts);
  if (!read.ok) return read;
  const sponsorship = read.request;
  const { signs, userOp, chainId, mode, token } = sponsorship;

  // The calls its callData makes (a delegated transfer's included), its window, a signing request's
  // fingerprint, and everything the checks below read: from the merchant's cached configuration (no round
  // trip), else from Postgres in one.
  const calls = readOperationCalls(deps, sponsorship);
  facts.targets = calls.targets.map((target) => target.toLowerCase());
  const window = delegatedWindow(sponsorshipWindow(deps.now()), calls.transfer);
  const requestFingerprint = signs
    ? signingRequestFingerprint({
        chainId,
        entryPoint: sponsorship.entryPoint.address,
        mode,
        ...(token && { token }),
        ...window,
        userOp,
      })
    : '';
  const reads = await readDecisionInputs(deps, client, sponsorship, calls, requestFingerprint);

  // Deny rules, decoding, batch rules and the client's policies (the first that passes sponsors); then a
  // delegated transfer's owner signature, on its chain.
  const policies = checkCallPolicies(calls, reads, sponsorship, deps.now());
  if (!policies.ok) return policies;
  facts.policyId = policies.candidates[0]!.id;
  const signature = calls.transfer
    ? await checkDelegationSignature(deps, chainId, calls.transfer, calls.delegationManager)
    : undefined;
  if (signature) return signature;

  // Prepaid balance (sponsored, mainnets).
  const balance = await checkPrepaidBalance(deps.db, { merchantId: client.merchantId, chainId, mode });
  if (!balance.ok) return answerDenial(balance.denial);

  // A repeat of an operation already signed (identical request in the same second, from any client)
  // answers what was signed then and consumes nothing: one operation, one usage row, one charge.
  const repeat = signs
    ? await signedRepeat(deps, reads, sponsorship, policies.candidates, requestFingerprint)
    : undefined;
  if (repeat) return { ok: true, result: repeat };

  // Bounds of a signed operation: its gas (the paymaster limits as the signer will sign them) and fees.
  const bounded = signs ? await boundSignedOperation(deps, chainId, userOp.gas, token) : undefined;
  if (bounded && !bounded.ok) return bounded;

  // The chain's time, when a candidate policy has budgets (their periods start by it).
  const budgeted = await readBudgetClock(deps, chainId, policies.candidates);
  if (!budgeted.ok) return budgeted;
  facts.policyId = budgeted.candidates[0]!.id;

  const limits = await checkSponsorshipLimits(deps, client, sponsorship, {
    delegatedOwner: calls.transfer?.owner,
    signedGas: bounded?.signedGas,
    holdUntil: new Date(window.validUntil * 1000),
    merchantLimits: reads.merchantLimits,
    policies: budgeted.candidates,
    chainTime: budgeted.chainTime,
  });
  if (limits.snapshot) facts.usdSnapshot = limits.snapshot;
  if (!limits.ok) return answerDenial(limits.denial);
  if (limits.policyId !== undefined) facts.policyId = limits.policyId;

  if (!signs) return answerStubData(deps, sponsorship, window);
  return signAndRecord(deps, {
    client,
    facts,
    method: sponsorship.method,
    chainId,
    entryPoint: sponsorship.entryPoint,
    userOp,
    userOpForSigner: sponsorship.parsed.params.userOpForSigner,
    token,
    window,
    requestFingerprint,
    limits,
    ...(calls.transfer && { delegatedOwner: calls.transfer.owner }),
    ...(bounded?.signedGas && { signedGas: bounded.signedGas }),
    approve: (estimatedUsd) =>
      approveSponsorship(
        deps,
        {
          clientId: client.id,
          chainId,
          sender: userOp.sender,
          calls: calls.decoded.ok
            ? calls.decoded.execution.calls.map((call) => ({
                to: call.target,
                value: call.value.toString(),
                data: call.data,
              }))
            : [],
          candidates: budgeted.candidates,
          consumption: limits.consumption,
        },
        facts,
        estimatedUsd,
      ),
  });
}

/**
 * Everything read before deciding: the deny rules matching the operation, its allowlisted targets, the
 * merchant's limits and the client's policies, from the merchant's cached configuration when the app has
 * the cache (no round trip), else in one statement with what an identical signing request already
 * answered. The checks still decide in SPEC's order.
 */
async function readDecisionInputs(
  deps: Pick<PaymasterRpcDependencies, 'db' | 'merchantConfigs'>,
  client: PaymasterClient,
  { chainId, userOp, signs, entryPoint }: SponsorshipRequest,
  calls: OperationCalls,
  requestFingerprint: string,
): Promise<Awaited<ReturnType<typeof readPaymasterDecisionInputs>> & { repeatRead: boolean }> {
  const operation = {
    merchantId: client.merchantId,
    clientId: client.id,
    chainId,
    senders: [userOp.sender.toLowerCase(), ...(calls.transfer ? [calls.transfer.owner.toLowerCase()] : [])],
    denyTargets: calls.targets.map((target) => target.toLowerCase()),
    allowlistTargets: calls.decoded.ok ? calls.allowlistTargets.map((target) => target.toLowerCase()) : [],
  };
  if (deps.merchantConfigs) {
    const reads = await cachedDecisionReads(deps.merchantConfigs, operation);
    return { ...reads, signedResult: undefined, repeatRead: false };
  }
  const reads = await readPaymasterDecisionInputs(deps.db, {
    ...operation,
    ...(signs && { signedRequest: { entryPoint: entryPoint.address, requestFingerprint } }),
  });
  return { ...reads, repeatRead: true };
}

/**
 * What an identical signing request already answered (step 13). Read with the decision inputs when they
 * come from Postgres; from the cache, `record_signed_paymaster_operation` finds it after the signer
 * (migration 2026_11_29_0901), except where a candidate policy has an approval webhook: its receiver must
 * not be asked again for an operation already signed, so the repeat is read here first.
 */
async function signedRepeat(
  deps: Pick<PaymasterRpcDependencies, 'db'>,
  reads: { signedResult: StoredPaymasterResult | undefined; repeatRead: boolean },
  { chainId, entryPoint }: SponsorshipRequest,
  candidates: readonly SponsorshipPolicyRules[],
  requestFingerprint: string,
): Promise<StoredPaymasterResult | undefined> {
  if (reads.repeatRead) return reads.signedResult;
  if (!candidates.some((policy) => policy.approvalWebhook !== null)) return undefined;
  return findSignedResult(deps.db, { chainId, entryPoint: entryPoint.address, requestFingerprint });
}

/**
 * Sponsorship limits: prepaid balance reservation (mainnets) → merchant per-transaction cap (priced) →
 * platform budget → the merchant's share of it → merchant and client daily caps → per-sender daily USD
 * cap → per-sender hourly op limit. Stub data only reads them; for signed data this prices the
 * operation and checks its caps, and the counters are consumed with the usage row once it is signed.
 */
async function checkSponsorshipLimits(
  deps: PaymasterRpcDependencies,
  client: PaymasterClient,
  { chainId, userOp, mode, signs }: SponsorshipRequest,
  {
    delegatedOwner,
    signedGas,
    holdUntil,
    merchantLimits,
    policies,
    chainTime,
  }: {
    delegatedOwner: Address | undefined;
    signedGas: SignedGas | undefined;
    holdUntil: Date;
    merchantLimits: Awaited<ReturnType<typeof readPaymasterDecisionInputs>>['merchantLimits'];
    policies: SponsorshipPolicyRules[];
    chainTime: Date | undefined;
  },
): Promise<SponsorshipLimitOutcome> {
  if (!deps.limits) throw new Error('sponsorship limits are not wired into the paymaster RPC');
  return deps.limits.check({
    merchantId: client.merchantId,
    clientId: client.clientId,
    chainId,
    sender: userOp.sender.toLowerCase(),
    ...(delegatedOwner && { delegatedOwner: delegatedOwner.toLowerCase() }),
    mode,
    consume: signs,
    ...(signedGas && { gas: signedGas, holdUntil }),
    merchantLimits,
    policies,
    ...(chainTime && { chainTime }),
  });
}

/**
 * The candidates the limit step tries and the chain time their budgets count in. Only a candidate with
 * budgets reads the chain (one shared read a second per chain: chain/chainClock.ts). When the chain
 * cannot be read, a policy with budgets cannot be said to have room and sponsors nothing (fail
 * closed): a later candidate without budgets still may, and without one the answer is an upstream error.
 */
async function readBudgetClock(
  deps: PaymasterRpcDependencies,
  chainId: number,
  candidates: SponsorshipPolicyRules[],
): Promise<{ ok: true; candidates: SponsorshipPolicyRules[]; chainTime: Date | undefined } | DeniedAnswer> {
  const withBudgets = candidates.find((policy) => policy.budgets.length > 0);
  if (!withBudgets) return { ok: true, candidates, chainTime: undefined };
  const chainTime = await deps.chainClocks?.latest(chainId);
  if (chainTime) return { ok: true, candidates, chainTime };
  const unbudgeted = candidates.filter((policy) => policy.budgets.length === 0);
  if (unbudgeted.length > 0) return { ok: true, candidates: unbudgeted, chainTime: undefined };
  deps.logger.error({ chainId, policyId: withBudgets.id }, 'chain time for policy budgets could not be read');
  return denyWithError(
    JSON_RPC_ERRORS.internalError,
    `paymaster_upstream_error: chain ${chainId} could not be read for the time policy "${withBudgets.name}" counts its budgets by; retry later`,
    'denied_upstream',
    'policy_budget_chain_unavailable',
  );
}

/** Stub data, built locally for our paymaster contract on the chain (nothing is signed or recorded). */
function answerStubData(
  deps: PaymasterRpcDependencies,
  { chainId, entryPoint, userOp, token }: SponsorshipRequest,
  window: { validAfter: number; validUntil: number },
): SponsorshipAnswer {
  const paymaster = deps.paymasterFor(chainId, entryPoint.version);
  if (!paymaster) {
    return denyWithError(
      JSON_RPC_ERRORS.internalError,
      `paymaster_upstream_error: no paymaster contract is deployed for chain ${chainId} and EntryPoint v${entryPoint.version}`,
      'denied_upstream',
      'paymaster_not_deployed',
    );
  }
  const requestedGas = {
    paymasterVerificationGasLimit: userOp.gas.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: userOp.gas.paymasterPostOpGasLimit,
  };
  return {
    ok: true,
    result: buildStubPaymasterResult({ paymaster, ...(token && { token }), ...window, requestedGas }),
  };
}
