import { randomUUID } from 'node:crypto';
import { type Address, type Hex, numberToHex } from 'viem';
import type { EntryPointVersion } from '../../chain/entryPoints';
import type { Db } from '../../db/client';
import { trySponsorshipLimits } from '../../db/paymasterLimits';
import { recordSignedOperation } from '../../db/paymasterUsage';
import type { Logger } from '../../logging/logger';
import type { PaymasterClient } from '../policy/clientChecks';
import { delegatedByReason } from '../delegation/delegatedTransferWindow';
import { JSON_RPC_ERRORS } from './jsonRpc';
import type { PendingConsumption, SponsorshipLimits } from '../limits/limits';
import { firstAttemptTaken } from './firstAttemptTaken';
import type { ApprovalGate } from './approveSponsorship';
import { denyWithError, answerDenial, type SponsorshipAnswer } from './sponsorshipAnswer';
import type { SignerClient, SignerFailure } from './signerClient';
import type { PaymasterMethod, SponsorshipUserOperation } from './sponsorshipParams';
import type { UsageFacts } from './usageRecords';
import { sponsoredUserOpHash } from './userOpHash';
import type { UserPaidPricer } from '../pricing/userPaidPricing';
import type { maxGasCostWei } from '../../money/gasPricing';

/** What signing and recording needs of the paymaster RPC's dependencies. */
export interface SigningDependencies {
  db: Db;
  signer: SignerClient;
  logger: Logger;
  now: () => Date;
  /** Prices user-paid gas (issue 26, finding 8); without it the signer's configured rate applies. */
  userPaidPricer?: UserPaidPricer;
}

/**
 * The last step of a signing request that passed every check: the signing service signs, then the
 * operation's limits are consumed and its usage row inserted in one round trip (all or nothing) before
 * the signature leaves; a denied or duplicate operation answers the denial or the stored data.
 */
export async function signAndRecord(
  deps: SigningDependencies,
  {
    client,
    facts,
    method,
    chainId,
    entryPoint,
    userOp,
    userOpForSigner,
    token,
    window,
    requestFingerprint,
    limits,
    delegatedOwner,
    signedGas,
    approve,
  }: {
    client: PaymasterClient;
    facts: UsageFacts;
    method: PaymasterMethod;
    chainId: number;
    entryPoint: { address: Address; version: EntryPointVersion };
    userOp: SponsorshipUserOperation;
    userOpForSigner: Record<string, unknown>;
    token: Address | undefined;
    window: { validUntil: number; validAfter: number };
    requestFingerprint: string;
    limits: Awaited<ReturnType<SponsorshipLimits['check']>> & { ok: true };
    delegatedOwner?: Address;
    /** The gas as it will be signed: what a user-paid operation's maximum charge is priced on. */
    signedGas?: Parameters<typeof maxGasCostWei>[0];
    /**
     * The approval webhook of the policy that would sponsor (approveSponsorship.ts), asked with the
     * operation's estimated USD cost before anything is signed; it answers what the recording may take.
     */
    approve?: (estimatedUsd: string | null) => Promise<ApprovalGate>;
  },
): Promise<SponsorshipAnswer> {
  const { db } = deps;
  // User-paid gas is priced now, from the price source, and held to the client's per-operation cap.
  const userPaid =
    token && signedGas && deps.userPaidPricer
      ? await deps.userPaidPricer.price({ client, chainId, token, gas: signedGas })
      : undefined;
  if (userPaid && !userPaid.ok) return answerDenial(userPaid.denial);
  if (userPaid?.snapshot) facts.usdSnapshot = userPaid.snapshot;
  // No signature exists before the receiver approved: a refusal answers with nothing signed or held.
  const gate = approve
    ? await approve(facts.usdSnapshot?.estimatedCostUsd ?? null)
    : { ok: true as const, consumption: limits.consumption };
  if (!gate.ok) return gate;
  const signed = await deps.signer.signPaymasterData({
    chainId,
    entryPoint: entryPoint.address,
    entryPointVersion: entryPoint.version,
    userOp: userOpForSigner,
    mode: token ? 'erc20' : 'sponsored',
    ...(token && { token }),
    ...(userPaid?.exchangeRate !== undefined && { exchangeRate: numberToHex(userPaid.exchangeRate) }),
    ...window,
  });
  if (!signed.ok) {
    // Nothing was consumed. A limit (or every candidate's budget) that would deny this operation still
    // answers first (SPEC's order: limits before the signer): the consumption is tried and rolled back.
    const limitDenial = gate.consumption && (await wouldBeDenied(db, gate.consumption, facts));
    return limitDenial ?? answerSignerFailure(deps.logger, signed.failure, chainId);
  }

  const userOpHash: Hex = sponsoredUserOpHash({
    chainId,
    entryPoint: entryPoint.address,
    entryPointVersion: entryPoint.version,
    userOp,
    paymaster: signed.result,
  });
  // Limits and usage row in one round trip, committed before the signature leaves: an operation we
  // cannot account for is not released, and one that any limit denies is not answered.
  const consumption = gate.consumption ?? nothingToConsume(deps.now(), client.merchantId, facts.policyId);
  // First match wins with budgets: each candidate's attempt is atomic, so a refused one took nothing,
  // and the row names the policy whose attempt was taken.
  const taken = await firstAttemptTaken(consumption, async (consumptions, policyId) => {
    const recording = await recordSignedOperation(db, consumptions, consumption.hold, {
      merchantId: client.merchantId,
      clientId: client.clientId,
      ...facts,
      ...(policyId !== undefined && { policyId }),
      method,
      status: 'submitted',
      // SPEC rule 7: the row keeps the real sender and names the original owner.
      reason: delegatedOwner ? delegatedByReason(delegatedOwner) : null,
      userOpHash,
      validUntil: new Date(window.validUntil * 1000),
      requestFingerprint,
      signedResult: signed.result,
      holdId: limits.holdId ?? null,
    });
    return recording.kind === 'denied' ? recording.deniedAt : recording;
  });
  const recording = taken.result;
  if (taken.attempt.policyId !== undefined) facts.policyId = taken.attempt.policyId;
  if (taken.deniedAt !== undefined) return answerDenial(taken.attempt.denial(taken.deniedAt));
  switch (recording?.kind) {
    case undefined:
      throw new Error('a taken attempt has a recording');
    case 'recorded':
      return { ok: true, result: signed.result };
    case 'duplicate':
      // The operation was recorded already (an identical request): its row owns it; nothing was consumed.
      return { ok: true, result: recording.stored };
  }
}

/** The denial a limit or every candidate's budget would answer now (tried, rolled back), or undefined. */
async function wouldBeDenied(
  db: Db,
  consumption: PendingConsumption,
  facts: UsageFacts,
): Promise<SponsorshipAnswer | undefined> {
  const tried = await firstAttemptTaken(consumption, (consumptions) =>
    trySponsorshipLimits(db, consumptions, consumption.hold),
  );
  if (tried.deniedAt === undefined) return undefined;
  facts.policyId = tried.attempt.policyId;
  return answerDenial(tried.attempt.denial(tried.deniedAt));
}

/** Where the limits hand back nothing to consume (the benchmarks' no-limits baseline): one empty attempt. */
function nothingToConsume(now: Date, merchantId: string, policyId: string | undefined): PendingConsumption {
  return {
    attempts: [
      {
        policyId,
        consumptions: [],
        budgetsFrom: 0,
        denial: () => {
          throw new Error('nothing to deny');
        },
      },
    ],
    hold: { holdId: randomUUID(), expiresAt: now, now, merchantId },
  };
}

/** The signing service's failure as the RPC answers it: its denials unchanged (SPEC rule 10), the rest -32603. */
function answerSignerFailure(logger: Logger, failure: SignerFailure, chainId: number): SponsorshipAnswer {
  switch (failure.kind) {
    case 'denied':
      return denyWithError(failure.code, failure.message, 'denied_upstream', 'signer_rejected');
    case 'mode_mismatch':
      logger.error(
        { detail: failure.detail, chainId },
        'signing service returned paymaster data in the wrong mode',
      );
      return denyWithError(
        JSON_RPC_ERRORS.internalError,
        `paymaster_mode_mismatch: ${failure.detail}`,
        'denied_upstream',
        'paymaster_mode_mismatch',
      );
    case 'upstream':
      logger.error({ detail: failure.detail, chainId }, 'signing service failed');
      return denyWithError(
        JSON_RPC_ERRORS.internalError,
        'paymaster_upstream_error: the signing service is unavailable; retry later',
        'denied_upstream',
        'paymaster_upstream_error',
      );
  }
}
