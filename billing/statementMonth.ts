/**
 * Statement months: UTC calendar months named "YYYY-MM". Pure date arithmetic with no imports, so the
 * monthly statements workflow can use it too.
 */

export interface StatementMonth {
  /** "YYYY-MM". */
  month: string;
  /** 00:00:00.000 UTC on the 1st. */
  start: Date;
  /** 00:00:00.000 UTC on the 1st of the next month (exclusive). */
  end: Date;
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

function monthStartingAt(year: number, monthIndex: number): StatementMonth {
  const start = new Date(Date.UTC(year, monthIndex, 1));
  const end = new Date(Date.UTC(year, monthIndex + 1, 1));
  return { month: start.toISOString().slice(0, 7), start, end };
}

/** "2026-11" → its bounds; undefined for anything that is not a real month (2026-13, 2026-1, 0000-01). */
export function parseStatementMonth(text: string): StatementMonth | undefined {
  const match = MONTH.exec(text);
  if (!match || match[1] === '0000') return undefined;
  return monthStartingAt(Number(match[1]), Number(match[2]) - 1);
}

/** The most recent month that has ended at `now`: at 2026-12-01T00:00:00.000Z that is 2026-11. */
export function latestClosedMonth(now: Date): StatementMonth {
  return monthStartingAt(now.getUTCFullYear(), now.getUTCMonth() - 1);
}

/** True once `month` has ended at `now` (its last instant is in the past). */
export function hasMonthClosed(month: StatementMonth, now: Date): boolean {
  return now.getTime() >= month.end.getTime();
}

/** Failure types of the statements run that retrying cannot change (shared by activities and workflow). */
export const INVALID_STATEMENT_MONTH = 'InvalidStatementMonth';
export const STATEMENT_MONTH_NOT_CLOSED = 'StatementMonthNotClosed';
