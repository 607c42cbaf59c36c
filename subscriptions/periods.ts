import type { PlanInterval } from '../db/schema';

/**
 * A plan's period in seconds, as the ERC20PeriodTransferEnforcer counts it: periods on chain have one
 * fixed length, so a month is 30 days (docs/decisions.md, issue 42).
 */
const INTERVAL_SECONDS: Record<PlanInterval, bigint> = {
  day: 86_400n,
  week: 7n * 86_400n,
  month: 30n * 86_400n,
};

export function periodSeconds(interval: PlanInterval, intervalCount: number): bigint {
  return INTERVAL_SECONDS[interval] * BigInt(intervalCount);
}
