import type { PolicyBudget, PolicyBudgetPeriod } from '../../db/schema';
import type { SponsorshipPolicyRules } from '../../db/paymasterDecisionReads';
import { denial } from '../rpc/denials';
import { usdToMicro } from '../../money/microUsd';
import type { CountedRule } from './limitRules';

/**
 * A sponsorship policy's budgets (issue 43) as counted rules of the limit engine: each
 * budget is a counter of its own, consumed all or nothing with the client's limits
 * (`consume_paymaster_limits`), so no period is overspent by racing operations. USD budgets count what
 * the merchant is charged (`charged`, as the merchant and client daily caps: held at the maximum
 * charge, settled at the actual one on inclusion, released when dropped); operation budgets count
 * signed operations (`ops`). A period starts by the chain's time (chain/chainClock.ts), never the
 * server's: docs/decisions.md "Policy budgets by period (issue 43, item 4)".
 */

/** A policy as its budgets need it. */
export type BudgetedPolicy = Pick<SponsorshipPolicyRules, 'id' | 'name' | 'budgets'>;

const DAY_MS = 24 * 3600 * 1000;

/**
 * When the period holding `chainTime` started, in UTC: the day at 00:00, the ISO week on Monday 00:00,
 * the calendar month on its first day; a lifetime budget never rolls over (the epoch).
 */
export function budgetPeriodStart(period: PolicyBudgetPeriod, chainTime: Date): Date {
  const day = Date.UTC(chainTime.getUTCFullYear(), chainTime.getUTCMonth(), chainTime.getUTCDate());
  switch (period) {
    case 'day':
      return new Date(day);
    case 'week':
      // getUTCDay: Sunday 0 … Saturday 6; days since Monday: Monday 0 … Sunday 6.
      return new Date(day - ((chainTime.getUTCDay() + 6) % 7) * DAY_MS);
    case 'month':
      return new Date(Date.UTC(chainTime.getUTCFullYear(), chainTime.getUTCMonth(), 1));
    case 'lifetime':
      return new Date(0);
  }
}

/** When the period after the one starting at `start` starts (undefined for a lifetime). */
function nextPeriodStart(period: PolicyBudgetPeriod, start: Date): Date | undefined {
  switch (period) {
    case 'day':
      return new Date(start.getTime() + DAY_MS);
    case 'week':
      return new Date(start.getTime() + 7 * DAY_MS);
    case 'month':
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    case 'lifetime':
      return undefined;
  }
}

/**
 * One counter per budget, keyed by what the budget is (policy, kind, period, scope, and the sender for
 * a per-sender one), never its place in the list: editing, adding or removing one budget leaves every
 * other budget's count as it was, and a changed amount applies to what the period already counted.
 */
export function budgetCounterKey(policyId: string, budget: PolicyBudget, sender: string): string {
  const base = `policy_budget:${policyId}:${budget.kind}:${budget.period}:${budget.scope}`;
  return budget.scope === 'sender' ? `${base}:${sender.toLowerCase()}` : base;
}

const periodWords: Record<PolicyBudgetPeriod, string> = {
  day: 'per day',
  week: 'per week',
  month: 'per month',
  lifetime: 'over its lifetime',
};

/**
 * The policy's budgets as counted rules for one operation, sorted by counter key (their lock order,
 * after the client's limits). A USD budget counts sponsored gas only: a user-paid operation costs the
 * merchant nothing, and counts against operation budgets alone.
 */
export function policyBudgetRules(
  policy: BudgetedPolicy,
  { sender, sponsored, chainTime }: { sender: string; sponsored: boolean; chainTime: Date },
): CountedRule[] {
  return policy.budgets
    .filter((budget) => budget.kind === 'operations' || sponsored)
    .map((budget): CountedRule => {
      const windowStart = budgetPeriodStart(budget.period, chainTime);
      const next = nextPeriodStart(budget.period, windowStart);
      const whose = budget.scope === 'sender' ? ` for sender ${sender.toLowerCase()}` : '';
      const amount = budget.kind === 'usd' ? `${budget.amount} USD` : `${budget.amount} operations`;
      const resets = next ? `; the next period starts at ${next.toISOString()} by the chain's time` : '';
      const held =
        budget.kind === 'usd' ? ', and what unsent operations hold frees up at their validUntil' : '';
      return {
        counter: { key: budgetCounterKey(policy.id, budget, sender), windowStart },
        basis: budget.kind === 'usd' ? 'charged' : 'ops',
        limit: budget.kind === 'usd' ? usdToMicro(budget.amount) : BigInt(budget.amount),
        denial: () =>
          denial(
            budget.kind === 'usd' ? 'paymaster_spend_cap_exceeded' : 'paymaster_rate_limit_exceeded',
            `policy "${policy.name}" reached its budget of ${amount} ${periodWords[budget.period]}${whose}${resets}${held}`,
            budget.kind === 'usd' ? 'policy_budget_usd' : 'policy_budget_operations',
          ),
      };
    })
    .sort((a, b) => (a.counter.key < b.counter.key ? -1 : a.counter.key > b.counter.key ? 1 : 0));
}
