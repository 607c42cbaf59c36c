import { randomUUID } from 'node:crypto';
import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import type { Hex } from 'viem';
import { resolveDelegationFramework } from '../chain/delegationFramework';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { OperatorChains, OperatorClient } from '../chain/operatorChains';
import { chargedChain } from '../db/gasCharges';
import { billRedemptionGas } from '../db/subscriptionGasCharges';
import type { Db } from '../db/client';
import { findSessionById, markWorkflowsStarted } from '../db/sessions';
import { markChargeFailed, markChargeRedeemed } from '../db/subscriptionCharges';
import { findSubscriptionPlanById } from '../db/subscriptionPlans';
import {
  cancelSubscriptionNow,
  findSubscriptionById,
  markSubscriptionPastDue,
  markSubscriptionRenewed,
  type SubscriptionRow,
} from '../db/subscriptions';
import { normaliseDecimal } from '../money/baseUnits';
import { awaitPeriodOnChain, type ChainTimeWaitDetails } from '../subscriptions/awaitPeriodOnChain';
import { enforcerPeriodStart } from '../subscriptions/chargeSchedule';
import { decodeExpiry } from '../subscriptions/grantVerification';
import { chargePeriod } from '../subscriptions/periodCharge';
import { openPeriod, type OpenedPeriod } from '../subscriptions/periodSession';
import { createRedemptionQueue, type RedemptionQueue } from './redemptionQueue';
import {
  claimPeriodCharge,
  releasePeriodChargeClaim,
  renewPeriodChargeClaim,
} from '../subscriptions/periodChargeClaim';
import { chargeScheduleOf, delegationFromJson } from '../subscriptions/subscribe';
import { storeSubscriptionEvent } from '../subscriptions/subscriptionEvents';

/**
 * The charging workflow's side effects (workflows/subscription.ts, issue 42). Each period: open it (its
 * session and charge row, keyed by the period index), start the session's workflow, charge on chain
 * (asking the chain first: a redemption already made is found, never sent twice), record; then the
 * subscription's state and events. Events are stored once per occasion (subscriptions/subscriptionEvents.ts)
 * and their deliveries started by the session event activities' `startWebhookDeliveries`.
 */

export interface SubscriptionActivityDependencies {
  db: Db;
  networks: NetworkRegistry;
  /** SUBSCRIPTION_EXECUTOR_PRIVATE_KEY's clients; without it every charge fails with `no_subscription_executor`. */
  executor?: OperatorChains;
  /** Starts a period session's workflow (workflowClient/sessions.ts, bound to the sessions queue). */
  startSessionWorkflow: (session: {
    sessionId: string;
    merchantId: string;
    sandboxMode: boolean;
    expiresAt: Date;
  }) => Promise<'started' | 'already_started'>;
  now?: () => Date;
  /**
   * Prices a redemption's gas to bill the merchant's prepaid balance (mainnets only): the paymaster's markup
   * and the chain's fresh ETH/USD answer. Without it nothing is billed.
   */
  redemptionGas?: RedemptionGasPricing;
  /** Reported while a charge waits for the chain to reach its period (default: the activity's heartbeat). */
  heartbeat?: (details: ChainTimeWaitDetails) => void;
}

/** How often a charge reads the latest block while the chain has not reached the period's start. */
const CHAIN_TIME_POLL_MS = 1_000;
/**
 * How long one attempt waits for it: well inside the charge's 5-minute start-to-close, leaving the
 * redemption its time. A chain still behind then fails the attempt as retryable (Temporal tries again), never
 * as a failed charge.
 */
const CHAIN_TIME_MAX_WAIT_MS = 120_000;

export interface RedemptionGasPricing {
  markupBps: number;
  /** USD per ETH with 8 decimals, or undefined without a fresh price (the charge is kept unpriced). */
  ethUsdAnswer(chainId: number): Promise<bigint | undefined>;
}

export type PeriodChargeResult =
  | { kind: 'redeemed'; sessionId: string; txHash: string }
  | { kind: 'failed'; sessionId?: string; failureReason: string };

export interface PeriodBounds {
  subscriptionId: string;
  periodIndex: number;
  /** ISO 8601. */
  periodStart: string;
  periodEnd: string;
}

export interface PeriodChargeInput {
  subscriptionId: string;
  periodIndex: number;
  /** ISO 8601: the period session's expiry (past the last moment a charge may be attempted). */
  sessionExpiresAt: string;
}

async function findSubscriptionOrFail(db: Db, subscriptionId: string): Promise<SubscriptionRow> {
  const row = await findSubscriptionById(db, subscriptionId);
  if (!row) {
    throw ApplicationFailure.nonRetryable(
      `subscription ${subscriptionId} does not exist`,
      'UnknownSubscription',
    );
  }
  return row;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Bills the redemption's gas to the merchant (db/subscriptionGasCharges.ts): once per period charge, whether
 * the redemption was sent by this attempt or found made by an earlier one (a retry after a crash between
 * the redemption and its record or its bill).
 */
async function billGasOf(
  { db, redemptionGas }: SubscriptionActivityDependencies,
  client: ReturnType<OperatorChains['client']>,
  { subscription, chargeId, txHash }: { subscription: SubscriptionRow; chargeId: string; txHash: Hex },
): Promise<void> {
  if (!redemptionGas || !chargedChain(subscription.chain_id)) return;
  const receipt = await client.getTransactionReceipt({ hash: txHash });
  await billRedemptionGas(db, {
    merchantId: subscription.merchant_id,
    subscriptionChargeId: chargeId,
    chainId: subscription.chain_id,
    txHash,
    gasCostWei: receipt.gasUsed * receipt.effectiveGasPrice,
    markupBps: redemptionGas.markupBps,
    ethUsdAnswer: await redemptionGas.ethUsdAnswer(subscription.chain_id),
  });
}

/** One attempt at a period's charge (chargeSubscriptionPeriod below). */
async function chargeOnePeriod(
  dependencies: SubscriptionActivityDependencies,
  sendRedemption: RedemptionQueue,
  { subscriptionId, periodIndex, sessionExpiresAt }: PeriodChargeInput,
): Promise<PeriodChargeResult> {
  const { db, networks, executor, startSessionWorkflow, now = () => new Date() } = dependencies;
  const subscription = await findSubscriptionOrFail(db, subscriptionId);
  if (subscription.status === 'canceled') return { kind: 'failed', failureReason: 'subscription_canceled' };
  if (!executor) return { kind: 'failed', failureReason: 'no_subscription_executor' };
  const plan = (await findSubscriptionPlanById(db, subscription.plan_id))!;
  const network = executor.network(subscription.chain_id);
  const framework = resolveDelegationFramework(network.chainId, network.contracts);
  if (!framework) return { kind: 'failed', failureReason: 'no_delegation_framework' };
  const client = executor.client(subscription.chain_id);

  // Due by chain time: wait for a block in the enforcer's period before opening, reading or sending.
  const periodStart = BigInt(
    Math.ceil(enforcerPeriodStart(chargeScheduleOf(subscription), periodIndex) / 1000),
  );
  const chainNow = await awaitPeriodOnChain(client, {
    periodStart,
    maxWaitMs: CHAIN_TIME_MAX_WAIT_MS,
    pollMs: CHAIN_TIME_POLL_MS,
    heartbeat: dependencies.heartbeat ?? heartbeat,
    sleep,
  });
  if (chainNow === undefined) {
    throw ApplicationFailure.retryable(
      `chain ${subscription.chain_id} has not reached the period's start (${periodStart}) yet`,
      'ChainBehindPeriodStart',
    );
  }

  const opened = await openPeriod(db, networks, {
    subscription,
    plan,
    periodIndex,
    sandboxMode: network.testnet,
    expiresAt: new Date(sessionExpiresAt),
    now: now(),
    fromBlock: await client.getBlockNumber(),
  });
  const sessionId = opened.session.id;
  await startSessionWorkflow({
    sessionId,
    merchantId: subscription.merchant_id,
    sandboxMode: opened.session.sandbox_mode,
    expiresAt: opened.session.expires_at,
  });
  await markWorkflowsStarted(db, [sessionId]);
  if (opened.charge.status === 'redeemed') {
    const txHash = opened.charge.tx_hash! as Hex;
    await billGasOf(dependencies, client, { subscription, chargeId: opened.charge.id, txHash });
    return { kind: 'redeemed', sessionId, txHash };
  }

  // One attempt at a time (a reset from the Temporal UI can run a second beside this one): a period held by
  // another attempt is tried again later, when that attempt has recorded its outcome.
  const claimId = randomUUID();
  if (!(await claimPeriodCharge(db, opened.charge.id, claimId))) {
    throw ApplicationFailure.retryable(
      `period ${periodIndex} of subscription ${subscriptionId} is being charged by another attempt`,
      'PeriodChargeInFlight',
    );
  }
  try {
    return await redeemClaimedPeriod(dependencies, {
      subscription,
      framework,
      client,
      chainNow,
      opened,
      claimId,
      sendRedemption,
    });
  } finally {
    await releasePeriodChargeClaim(db, opened.charge.id, claimId);
  }
}

/** The claimed period's redemption (asking the chain first) and its record. */
async function redeemClaimedPeriod(
  dependencies: SubscriptionActivityDependencies,
  {
    subscription,
    framework,
    client,
    chainNow,
    opened,
    claimId,
    sendRedemption,
  }: {
    sendRedemption: RedemptionQueue;
    subscription: SubscriptionRow;
    framework: NonNullable<ReturnType<typeof resolveDelegationFramework>>;
    client: OperatorClient;
    chainNow: bigint;
    opened: OpenedPeriod;
    claimId: string;
  },
): Promise<PeriodChargeResult> {
  const { db } = dependencies;
  const sessionId = opened.session.id;
  const delegation = delegationFromJson(subscription.delegation);
  const expiryCaveat = delegation.caveats.find((caveat) =>
    same(caveat.enforcer, framework.timestampEnforcer),
  );
  const expiry = expiryCaveat && decodeExpiry(expiryCaveat.terms);
  // An expired permission would only revert: nothing is sent (the enforcer checks the next block's time).
  if (expiry && expiry.validBefore !== 0n && expiry.validBefore <= chainNow + 1n) {
    await markChargeFailed(db, opened.charge.id, 'permission_expired');
    return { kind: 'failed', sessionId, failureReason: 'permission_expired' };
  }
  const outcome = await chargePeriod(
    client,
    framework,
    {
      delegation,
      periodCaveat: delegation.caveats.find((caveat) =>
        same(caveat.enforcer, framework.erc20PeriodTransferEnforcer),
      )!,
      token: subscription.token_address as Hex,
      customer: subscription.customer_account as Hex,
      depositAddress: opened.depositAddress,
      amount: BigInt(subscription.period_amount),
      fromBlock: BigInt(opened.charge.from_block ?? 0),
      mayHaveEarlierRedemption: !opened.openedNow,
    },
    async (call) => {
      // Estimated before it queues (the estimate does not depend on the nonce), with headroom for the state
      // it is mined in; only the gas used is paid.
      const estimate = await client.estimateGas({ account: client.account, ...call });
      return sendRedemption(client, {
        ...call,
        gas: (estimate * 6n) / 5n,
        // Still this attempt's period, checked where the send is numbered: a lapsed claim sends nothing.
        beforeSend: () => renewPeriodChargeClaim(db, opened.charge.id, claimId),
      });
    },
  );
  if (outcome.kind === 'redeemed') {
    const recorded = await markChargeRedeemed(db, opened.charge.id, outcome.txHash);
    const txHash = recorded.tx_hash! as Hex;
    await billGasOf(dependencies, client, { subscription, chargeId: opened.charge.id, txHash });
    return { kind: 'redeemed', sessionId, txHash };
  }
  await markChargeFailed(db, opened.charge.id, outcome.failureReason);
  return { kind: 'failed', sessionId, failureReason: outcome.failureReason };
}

export function createSubscriptionActivities(dependencies: SubscriptionActivityDependencies) {
  const { db, now = () => new Date() } = dependencies;
  // One queue of the executor's redemptions per worker (activities/redemptionQueue.ts).
  const sendRedemption = createRedemptionQueue(db);
  const subscriptionOf = (subscriptionId: string) => findSubscriptionOrFail(db, subscriptionId);

  return {
    /** Whether the subscription still charges: canceled (by the api, at once) or to end at this period's end. */
    async subscriptionStanding({
      subscriptionId,
    }: {
      subscriptionId: string;
    }): Promise<{ canceled: boolean; cancelAtPeriodEnd: boolean }> {
      const row = await subscriptionOf(subscriptionId);
      return { canceled: row.status === 'canceled', cancelAtPeriodEnd: row.cancel_at_period_end };
    },

    /**
     * One attempt at a period's charge. Idempotent by the period index: the session and the charge row are
     * found again, a redeemed charge answers its transaction, and the chain is asked before any send.
     */
    chargeSubscriptionPeriod: (input: PeriodChargeInput) =>
      chargeOnePeriod(dependencies, sendRedemption, input),

    /** The period charged: `active` in it, its session the latest; `subscription.renewed` stored once. */
    async recordSubscriptionRenewed({
      sessionId,
      txHash,
      ...period
    }: PeriodBounds & { sessionId: string; txHash: string }): Promise<{ eventId: string }> {
      const row =
        (await markSubscriptionRenewed(db, period.subscriptionId, {
          start: new Date(period.periodStart),
          end: new Date(period.periodEnd),
          sessionId,
        })) ?? (await subscriptionOf(period.subscriptionId));
      const session = (await findSessionById(db, sessionId))!;
      const event = await storeSubscriptionEvent(
        db,
        row,
        {
          type: 'subscription.renewed',
          periodIndex: period.periodIndex,
          txHash,
          session: {
            id: session.id,
            amount: normaliseDecimal(session.amount),
            status: session.status,
            expiresAt: session.expires_at.toISOString(),
            createdAt: session.created_at.toISOString(),
          },
        },
        now(),
      );
      return { eventId: event.id };
    },

    /** A failed attempt: `subscription.payment_failed` with when it is tried again (stored once per attempt). */
    async recordSubscriptionPaymentFailed({
      subscriptionId,
      periodIndex,
      attempt,
      failureReason,
      nextAttemptAt,
    }: {
      subscriptionId: string;
      periodIndex: number;
      attempt: number;
      failureReason: string;
      nextAttemptAt: string | null;
    }): Promise<{ eventId: string }> {
      const event = await storeSubscriptionEvent(
        db,
        await subscriptionOf(subscriptionId),
        { type: 'subscription.payment_failed', periodIndex, attempt, failureReason, nextAttemptAt },
        now(),
      );
      return { eventId: event.id };
    },

    /** Every attempt of the period failed: `past_due` until the period ends. */
    async markSubscriptionPastDue({
      sessionId,
      ...period
    }: PeriodBounds & { sessionId?: string }): Promise<void> {
      await markSubscriptionPastDue(db, period.subscriptionId, {
        start: new Date(period.periodStart),
        end: new Date(period.periodEnd),
        sessionId,
      });
    },

    /** Ends the subscription (once) and stores `subscription.canceled` (once, whoever canceled it). */
    async endSubscription({ subscriptionId }: { subscriptionId: string }): Promise<{ eventId: string }> {
      const at = now();
      const row =
        (await cancelSubscriptionNow(db, subscriptionId, at)) ?? (await subscriptionOf(subscriptionId));
      const event = await storeSubscriptionEvent(db, row, { type: 'subscription.canceled' }, at);
      return { eventId: event.id };
    },
  };
}

export type SubscriptionActivities = ReturnType<typeof createSubscriptionActivities>;
