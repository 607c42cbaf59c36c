/**
 * When a subscription's periods are charged (issue 42), as plain arithmetic on milliseconds: the charging
 * workflow runs it (workflow code, so this module imports nothing). Period k is due at
 * `firstDueMs + k × periodMs` (the first due at the end of the trial, or at once) and lasts one period. A
 * failed charge is tried again 1, 3 and 5 days after its due time, but only while a charge would still
 * count for this period on chain: before the period ends and before the ERC20PeriodTransferEnforcer's own
 * period (counted from the permission's start time) that holds the due time ends — a late retry in the
 * enforcer's next period would spend the next period's allowance.
 */

const DAY_MS = 86_400_000;

/** The first attempt at the due time, then the retries after 1, 3 and 5 days. */
export const CHARGE_ATTEMPT_OFFSETS_MS = [0, DAY_MS, 3 * DAY_MS, 5 * DAY_MS] as const;

/** Failures a retry cannot mend: no further attempt in the period. */
export const FINAL_FAILURE_REASONS: readonly string[] = ['permission_revoked', 'permission_expired'];

export interface ChargeSchedule {
  firstDueMs: number;
  periodMs: number;
  /** The permission's start time (the enforcer's periods count from it). */
  enforcerStartMs: number;
}

export const periodDueAt = (schedule: ChargeSchedule, periodIndex: number) =>
  schedule.firstDueMs + periodIndex * schedule.periodMs;

export const periodEndAt = (schedule: ChargeSchedule, periodIndex: number) =>
  periodDueAt(schedule, periodIndex) + schedule.periodMs;

/**
 * The start of the ERC20PeriodTransferEnforcer's period that holds the period's due time: the earliest
 * chain time at which the enforcer grants this period's allowance. The charge waits for a block at or after
 * it, since before it the enforcer answers its previous period (already charged) or nothing (before the
 * permission's start), and the chain's latest block trails our clock by a few seconds.
 */
export function enforcerPeriodStart(schedule: ChargeSchedule, periodIndex: number): number {
  const due = periodDueAt(schedule, periodIndex);
  const enforcerPeriod = Math.max(0, Math.floor((due - schedule.enforcerStartMs) / schedule.periodMs));
  return schedule.enforcerStartMs + enforcerPeriod * schedule.periodMs;
}

/** The moment after which no charge of the period may be sent (see above). */
export function chargeWindowEnd(schedule: ChargeSchedule, periodIndex: number): number {
  const enforcerEnd = enforcerPeriodStart(schedule, periodIndex) + schedule.periodMs;
  return Math.min(periodEndAt(schedule, periodIndex), enforcerEnd);
}

/** The times the period's charge is attempted, first to last. */
export function chargeAttemptTimes(schedule: ChargeSchedule, periodIndex: number): number[] {
  const due = periodDueAt(schedule, periodIndex);
  const end = chargeWindowEnd(schedule, periodIndex);
  return CHARGE_ATTEMPT_OFFSETS_MS.map((offset) => due + offset).filter((at) => at < end);
}
