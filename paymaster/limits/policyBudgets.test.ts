import { budgetCounterKey, budgetPeriodStart } from './policyBudgets';

/** Budget periods start in UTC (docs/decisions.md "Policy budgets by period (issue 43, item 4)"). */
describe('budgetPeriodStart', () => {
  const at = (iso: string) => new Date(iso);

  it.each([
    ['day', '2026-11-29T23:59:59.999Z', '2026-11-29T00:00:00.000Z'],
    ['day', '2026-11-30T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    // ISO weeks start on Monday: a Sunday belongs to the week of the Monday before it.
    ['week', '2026-11-29T23:59:59.000Z', '2026-11-23T00:00:00.000Z'],
    ['week', '2026-11-30T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['week', '2026-12-02T12:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['week', '2027-01-01T08:00:00.000Z', '2026-12-28T00:00:00.000Z'],
    ['month', '2026-12-31T23:59:59.000Z', '2026-12-01T00:00:00.000Z'],
    ['month', '2027-02-28T10:00:00.000Z', '2027-02-01T00:00:00.000Z'],
    ['lifetime', '2026-11-29T10:00:00.000Z', '1970-01-01T00:00:00.000Z'],
  ] as const)('a %s budget at %s counts in the period starting %s', (period, time, start) => {
    expect(budgetPeriodStart(period, at(time)).toISOString()).toBe(start);
  });
});

describe('budgetCounterKey', () => {
  const policyId = '6f1c1f9e-0000-4000-8000-000000000001';

  it('names the budget by what it is, the sender lower-case for a per-sender budget', () => {
    expect(
      budgetCounterKey(policyId, { kind: 'usd', amount: '5', period: 'week', scope: 'policy' }, '0xAB'),
    ).toBe(`policy_budget:${policyId}:usd:week:policy`);
    expect(
      budgetCounterKey(
        policyId,
        { kind: 'operations', amount: '9', period: 'day', scope: 'sender' },
        '0xAbCd',
      ),
    ).toBe(`policy_budget:${policyId}:operations:day:sender:0xabcd`);
  });
});
