import { condition, continueAsNew, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { SessionEventActivities } from '../activities/sessionEvents';
import type { SubscriptionActivities } from '../activities/subscriptions';
import {
  chargeAttemptTimes,
  chargeWindowEnd,
  FINAL_FAILURE_REASONS,
  periodDueAt,
  periodEndAt,
  type ChargeSchedule,
} from '../subscriptions/chargeSchedule';

/**
 * One workflow per subscription (`subscription-<uuid>`, issue 42), one run per period (continue-as-new
 * after each, so a subscription of years keeps a short history):
 *
 *   wait for the period's due time (a durable timer) ──▶ charge ──redeemed──▶ subscription.renewed ──▶ next period
 *                                                          └─failed─▶ subscription.payment_failed, retried after
 *                                                             1, 3 and 5 days ──all failed──▶ past_due ──period end──▶ canceled
 *
 * The charge is an activity keyed by the period index: retried, or run again after a worker restart, it
 * finds the period's session and charge row and asks the chain before it sends, so a period is never
 * charged twice. A cancel signal (`atPeriodEnd` or at once) ends it: at once wakes it from its timer; at
 * the period's end it charges no further period. The database is read before each period too, so a
 * cancelation whose signal was lost is still seen before the next charge.
 */

const subscriptions = proxyActivities<SubscriptionActivities>({
  // Reads and single-row updates; retried while the database is unreachable.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const charge = proxyActivities<SubscriptionActivities>({
  // One redemption and its receipt; an RPC hiccup is retried (the retry asks the chain first).
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const { startWebhookDeliveries } = proxyActivities<SessionEventActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const cancelSubscriptionSignal = defineSignal<[{ atPeriodEnd: boolean }]>('cancelSubscription');

/** A period session stays payable an hour past the last moment its charge may be attempted. */
const SESSION_GRACE_MS = 3_600_000;

export interface SubscriptionInput {
  subscriptionId: string;
  schedule: ChargeSchedule;
  /** The period this run charges. */
  periodIndex: number;
  /** The `subscription.created` event to deliver first (the first run only). */
  createdEventId?: string;
  /** A cancel at period end asked in an earlier run. */
  cancelAtPeriodEnd?: boolean;
}

export type SubscriptionOutcome = { ended: 'canceled'; periodIndex: number };

export async function subscriptionWorkflow(input: SubscriptionInput): Promise<SubscriptionOutcome> {
  const { subscriptionId, schedule, periodIndex } = input;
  let cancelNow = false;
  let cancelAtPeriodEnd = input.cancelAtPeriodEnd ?? false;
  setHandler(cancelSubscriptionSignal, ({ atPeriodEnd }) => {
    if (atPeriodEnd) cancelAtPeriodEnd = true;
    else cancelNow = true;
  });
  /** Sleeps until `at` (workflow time); false when a cancel at once woke it first. */
  const waitUntil = async (at: number) => {
    const remaining = at - Date.now();
    if (remaining > 0) await condition(() => cancelNow, remaining);
    return !cancelNow;
  };
  const end = async () => {
    const { eventId } = await subscriptions.endSubscription({ subscriptionId });
    await startWebhookDeliveries({ eventId });
    return { ended: 'canceled' as const, periodIndex };
  };

  if (input.createdEventId) await startWebhookDeliveries({ eventId: input.createdEventId });
  if (!(await waitUntil(periodDueAt(schedule, periodIndex)))) return end();
  const standing = await subscriptions.subscriptionStanding({ subscriptionId });
  if (standing.canceled || standing.cancelAtPeriodEnd || cancelAtPeriodEnd) return end();

  const bounds = {
    subscriptionId,
    periodIndex,
    periodStart: new Date(periodDueAt(schedule, periodIndex)).toISOString(),
    periodEnd: new Date(periodEndAt(schedule, periodIndex)).toISOString(),
  };
  const charged = await chargeThePeriod(input, bounds, waitUntil);
  if (charged === 'canceled') return end();
  if (charged === 'unpaid') {
    await subscriptions.markSubscriptionPastDue(bounds);
    await waitUntil(periodEndAt(schedule, periodIndex));
    return end();
  }
  // A cancel that came while the period was charged ends the subscription now, not after the next period.
  if (cancelNow) return end();
  return continueAsNew<typeof subscriptionWorkflow>({
    subscriptionId,
    schedule,
    periodIndex: periodIndex + 1,
    cancelAtPeriodEnd,
  });
}

/** The period's attempts: at its due time, then after 1, 3 and 5 days while the charge can still count. */
async function chargeThePeriod(
  { subscriptionId, schedule, periodIndex }: SubscriptionInput,
  bounds: { subscriptionId: string; periodIndex: number; periodStart: string; periodEnd: string },
  waitUntil: (at: number) => Promise<boolean>,
): Promise<'charged' | 'unpaid' | 'canceled'> {
  const attempts = chargeAttemptTimes(schedule, periodIndex);
  const sessionExpiresAt = new Date(chargeWindowEnd(schedule, periodIndex) + SESSION_GRACE_MS).toISOString();
  for (let attempt = 0; attempt < attempts.length; attempt++) {
    if (!(await waitUntil(attempts[attempt]!))) return 'canceled';
    const outcome = await charge.chargeSubscriptionPeriod({ subscriptionId, periodIndex, sessionExpiresAt });
    if (outcome.kind === 'redeemed') {
      const { eventId } = await subscriptions.recordSubscriptionRenewed({
        ...bounds,
        sessionId: outcome.sessionId,
        txHash: outcome.txHash,
      });
      await startWebhookDeliveries({ eventId });
      return 'charged';
    }
    if (outcome.failureReason === 'subscription_canceled') return 'canceled';
    const final = FINAL_FAILURE_REASONS.includes(outcome.failureReason);
    const next = final ? undefined : attempts[attempt + 1];
    const { eventId } = await subscriptions.recordSubscriptionPaymentFailed({
      subscriptionId,
      periodIndex,
      attempt,
      failureReason: outcome.failureReason,
      nextAttemptAt: next === undefined ? null : new Date(next).toISOString(),
    });
    await startWebhookDeliveries({ eventId });
    if (next === undefined) break;
  }
  return 'unpaid';
}
