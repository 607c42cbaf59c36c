import { randomUUID } from 'node:crypto';
import type { Address, PublicClient } from 'viem';
import { delegationDigest, type Delegation } from '../chain/delegations';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { Db } from '../db/client';
import { findSubscriptionPlanById } from '../db/subscriptionPlans';
import {
  findSubscriptionByDelegationHash,
  insertSubscription,
  type SubscriptionRow,
} from '../db/subscriptions';
import { normaliseDecimal, toBaseUnits } from '../money/baseUnits';
import type { ChargeSchedule } from './chargeSchedule';
import { subscriptionChainOf } from './executorChains';
import { verifySubscriptionGrant } from './grantVerification';
import { newManageToken } from './manageTokens';
import { periodSeconds } from './periods';
import { storeSubscriptionEvent, subscriptionEventId } from './subscriptionEvents';

/**
 * A customer subscribes to a plan with their signed periodic permission (issue 42): the permission is
 * judged against the plan (subscriptions/grantVerification.ts) before anything is written; accepted, the
 * subscription and its `subscription.created` event are written together. The same signed delegation sent
 * again answers the subscription it already backs (its hash is unique), so a client that lost the answer
 * can send it again. The caller starts the charging workflow with the schedule returned.
 */

export interface SubscribeRequest {
  planId: string;
  chainId: number;
  token: string;
  delegation: Delegation;
}

export interface SubscribeContext {
  db: Db;
  networks: NetworkRegistry;
  clientOf: (chainId: number) => PublicClient | undefined;
  executor: Address | undefined;
  now: Date;
}

export type SubscribeOutcome =
  | {
      kind: 'subscribed';
      row: SubscriptionRow;
      createdEventId: string;
      schedule: ChargeSchedule;
      /** The manage link's token: in this answer only, never stored (subscriptions/manageTokens.ts). */
      manageToken: string;
    }
  | { kind: 'existing'; row: SubscriptionRow; createdEventId: string; schedule: ChargeSchedule }
  | { kind: 'unknown_plan' }
  | { kind: 'refused'; reason: string }
  | { kind: 'unavailable'; reason: string };

/** The delegation as stored: JSON with the salt as a decimal string. */
export const delegationJsonOf = (delegation: Delegation) =>
  JSON.stringify({ ...delegation, salt: delegation.salt.toString() });

export function delegationFromJson(json: unknown): Delegation {
  const stored = (typeof json === 'string' ? JSON.parse(json) : json) as Omit<Delegation, 'salt'> & {
    salt: string;
  };
  return { ...stored, salt: BigInt(stored.salt) };
}

export async function subscribe(
  context: SubscribeContext,
  request: SubscribeRequest,
): Promise<SubscribeOutcome> {
  const { db, now } = context;
  const plan = await findSubscriptionPlanById(db, request.planId);
  if (!plan) return { kind: 'unknown_plan' };
  const chain = subscriptionChainOf(context.networks, context.executor, request.chainId);
  if (!chain) return { kind: 'refused', reason: `Chain ${request.chainId} does not carry subscriptions` };
  const token = chain.tokens.find((candidate) => candidate.symbol === request.token);
  if (!token) {
    return {
      kind: 'refused',
      reason: `${request.token} is not offered on chain ${request.chainId}; offered: ${chain.tokens.map((entry) => entry.symbol).join(', ')}`,
    };
  }
  const delegationHash = delegationDigest(request.delegation, {
    chainId: request.chainId,
    delegationManager: chain.framework.delegationManager,
  });
  const existing = await findSubscriptionByDelegationHash(db, delegationHash);
  if (existing) {
    return existing.plan_id === plan.id
      ? { kind: 'existing', ...acceptedAnswer(existing) }
      : { kind: 'refused', reason: 'This permission already backs a subscription to another plan' };
  }
  if (plan.archived_at)
    return { kind: 'refused', reason: 'The plan is archived and takes no new subscriber' };

  const periodDuration = periodSeconds(plan.interval, plan.interval_count);
  const verdict = await verifySubscriptionGrant(
    context.clientOf(request.chainId),
    request.delegation,
    {
      chainId: request.chainId,
      token: token.address,
      periodAmount: toBaseUnits(normaliseDecimal(plan.amount), token.decimals),
      periodDuration,
      executor: chain.executor,
      now: BigInt(Math.floor(now.getTime() / 1000)),
    },
    chain.framework,
  );
  if (!verdict.ok) {
    return 'unavailable' in verdict
      ? { kind: 'unavailable', reason: verdict.reason }
      : { kind: 'refused', reason: verdict.reason };
  }

  const periodMs = Number(periodDuration) * 1000;
  const trialEnd = now.getTime() + plan.trial_days * 86_400_000;
  const firstDueMs = Math.max(trialEnd, Number(verdict.terms.startTime) * 1000);
  const trialing = plan.trial_days > 0;
  const manage = newManageToken();
  const row = await db.transaction().execute(async (trx) => {
    const inserted = await insertSubscription(trx, {
      id: randomUUID(),
      merchantId: plan.merchant_id,
      planId: plan.id,
      status: trialing ? 'trialing' : 'active',
      customerAccount: request.delegation.delegator,
      chainId: request.chainId,
      tokenSymbol: token.symbol,
      tokenAddress: token.address,
      periodAmount: verdict.terms.periodAmount,
      periodSeconds: Number(periodDuration),
      delegationJson: delegationJsonOf(request.delegation),
      delegationHash,
      currentPeriodStart: trialing ? now : new Date(firstDueMs),
      currentPeriodEnd: new Date(trialing ? firstDueMs : firstDueMs + periodMs),
      firstChargeAt: new Date(firstDueMs),
      permissionStartAt: new Date(Number(verdict.terms.startTime) * 1000),
      manageTokenHash: manage.hash,
    });
    // A concurrent request with the same delegation won the insert: answer its subscription.
    if (!inserted) return undefined;
    await storeSubscriptionEvent(trx, inserted, { type: 'subscription.created' }, now);
    return inserted;
  });
  if (!row) {
    const raced = (await findSubscriptionByDelegationHash(db, delegationHash))!;
    return { kind: 'existing', ...acceptedAnswer(raced) };
  }
  return { kind: 'subscribed', ...acceptedAnswer(row), manageToken: manage.token };
}

/**
 * The schedule the workflow charges by, from the stored subscription: the same for every answer about it.
 * A row without its anchors (written before migration 1520) is charged from its current period.
 */
export function chargeScheduleOf(row: SubscriptionRow): ChargeSchedule {
  const firstDueMs = (row.first_charge_at ?? row.current_period_start).getTime();
  return {
    firstDueMs,
    periodMs: row.period_seconds * 1000,
    enforcerStartMs: row.permission_start_at?.getTime() ?? firstDueMs,
  };
}

function acceptedAnswer(row: SubscriptionRow) {
  return {
    row,
    createdEventId: subscriptionEventId(row.id, 'created'),
    schedule: chargeScheduleOf(row),
  };
}
