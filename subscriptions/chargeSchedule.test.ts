import {
  chargeAttemptTimes,
  chargeWindowEnd,
  enforcerPeriodStart,
  periodDueAt,
  type ChargeSchedule,
} from './chargeSchedule';

const DAY = 86_400_000;

describe('a subscription’s charge schedule', () => {
  it('charges a monthly period at its due time, then 1, 3 and 5 days after it', () => {
    const schedule: ChargeSchedule = { firstDueMs: 0, periodMs: 30 * DAY, enforcerStartMs: 0 };
    expect(periodDueAt(schedule, 11)).toBe(330 * DAY);
    expect(chargeAttemptTimes(schedule, 2)).toEqual([60, 61, 63, 65].map((days) => days * DAY));
  });

  it('never retries past the period: a daily plan is charged once a day', () => {
    const schedule: ChargeSchedule = { firstDueMs: 0, periodMs: DAY, enforcerStartMs: 0 };
    expect(chargeAttemptTimes(schedule, 4)).toEqual([4 * DAY]);
  });

  it('never retries into the enforcer’s next period when a trial shifted the due times', () => {
    // Weekly, 3 trial days: due on day 3, 10, …; the permission’s periods turn on day 7, 14, …
    const schedule: ChargeSchedule = { firstDueMs: 3 * DAY, periodMs: 7 * DAY, enforcerStartMs: 0 };
    expect(chargeWindowEnd(schedule, 0)).toBe(7 * DAY);
    expect(chargeAttemptTimes(schedule, 0)).toEqual([3 * DAY, 4 * DAY, 6 * DAY]);
    expect(chargeAttemptTimes(schedule, 1)).toEqual([10 * DAY, 11 * DAY, 13 * DAY]);
  });

  it('a charge waits for the enforcer’s period that holds its due time, not for the due time', () => {
    // Due at the permission's start: the chain must reach the due time itself.
    expect(
      enforcerPeriodStart({ firstDueMs: 5 * DAY, periodMs: 30 * DAY, enforcerStartMs: 5 * DAY }, 2),
    ).toBe(65 * DAY);
    // Weekly, 3 trial days: due on day 10, the enforcer's period holding it began on day 7.
    expect(enforcerPeriodStart({ firstDueMs: 3 * DAY, periodMs: 7 * DAY, enforcerStartMs: 0 }, 1)).toBe(
      7 * DAY,
    );
  });
});
