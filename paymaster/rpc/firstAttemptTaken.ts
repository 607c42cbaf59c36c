import type { CounterConsumption } from '../../db/paymasterLimits';
import type { ConsumptionAttempt, PendingConsumption } from '../limits/limits';

/**
 * Runs the candidates' attempts in order until one is taken (`run` answers the refused position, or
 * what it recorded) or a client limit refuses one (answered at once, whatever the later candidates
 * would do). When every candidate's budget refuses, the first candidate's refusal answers, as the
 * first applying policy's refusal does for the static rules.
 */
export async function firstAttemptTaken<R>(
  consumption: PendingConsumption,
  run: (consumptions: CounterConsumption[], policyId: string | undefined) => Promise<number | undefined | R>,
): Promise<{ attempt: ConsumptionAttempt; deniedAt?: number; result?: R }> {
  let firstBudgetRefusal: { attempt: ConsumptionAttempt; deniedAt: number } | undefined;
  for (const attempt of consumption.attempts) {
    const outcome = await run(attempt.consumptions, attempt.policyId);
    if (typeof outcome !== 'number') return { attempt, ...(outcome !== undefined && { result: outcome }) };
    if (outcome < attempt.budgetsFrom) return { attempt, deniedAt: outcome };
    firstBudgetRefusal ??= { attempt, deniedAt: outcome };
  }
  if (!firstBudgetRefusal) throw new Error('a pending consumption has at least one attempt');
  return firstBudgetRefusal;
}
