import type { PlanInterval, SubscriptionStatus } from '../../db/schema';

/**
 * The words of a periodic permission, as the subscribe page shows them before the wallet's prompt (issue
 * 42): how much, how often, from when, until when, and how to end it. Shared by the server's rendering and
 * the page's script, so the sentence the customer reads is the same whichever drew it.
 */

const UNIT: Record<PlanInterval, [string, string]> = {
  day: ['day', 'days'],
  week: ['week', 'weeks'],
  month: ['month', 'months'],
};

/** `month (30 days)`, `3 months (90 days)`, `week`, `2 weeks`: on chain a month is 30 days. */
export function periodLabel(interval: PlanInterval, intervalCount: number): string {
  const [one, many] = UNIT[interval];
  const words = intervalCount === 1 ? one : `${intervalCount} ${many}`;
  return interval === 'month' ? `${words} (${30 * intervalCount} days)` : words;
}

/** A date as the customer reads it, in UTC so server and page print the same: `29 Nov 2026`. */
export function dayLabel(at: Date): string {
  return at.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
}

export interface PermissionWords {
  merchantName: string;
  tokenAmount: string;
  symbol: string;
  network: string;
  periodLabel: string;
  /** When the first period is charged: now, or the trial's end. */
  firstChargeAt: Date;
  trialDays: number;
}

/** The sentences, in order: what is allowed, from when, until when, how to cancel. */
export function permissionSentences(words: PermissionWords): string[] {
  const first =
    words.trialDays > 0
      ? `The first charge is on ${dayLabel(words.firstChargeAt)}, after your ${words.trialDays}-day trial.`
      : 'The first charge is taken now.';
  return [
    `You allow ${words.merchantName} to take at most ${words.tokenAmount} ${words.symbol} on ${words.network} from your account once every ${words.periodLabel}, and nothing more in a period.`,
    first,
    'The permission has no end date: it lasts until you cancel.',
    'You can cancel at any time from the manage link shown once you subscribe, or by revoking the permission in your wallet; nothing is taken after that.',
  ];
}

/** What the manage page says of a subscription's end; undefined while it still charges. */
export function endingSentence(subscription: {
  status: SubscriptionStatus;
  cancelAtPeriodEnd: boolean;
  currentPeriodEnd: Date;
}): string | undefined {
  if (subscription.status === 'canceled') return 'This subscription is canceled: nothing more is charged.';
  if (subscription.cancelAtPeriodEnd)
    return `Canceled: it ends on ${dayLabel(subscription.currentPeriodEnd)} and nothing more is charged.`;
  return undefined;
}
