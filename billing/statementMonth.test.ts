import { hasMonthClosed, latestClosedMonth, parseStatementMonth } from './statementMonth';

describe('statement months (UTC)', () => {
  test('a month parses to its UTC bounds, December rolling into the next year', () => {
    expect(parseStatementMonth('2026-11')).toEqual({
      month: '2026-11',
      start: new Date('2026-11-01T00:00:00.000Z'),
      end: new Date('2026-12-01T00:00:00.000Z'),
    });
    expect(parseStatementMonth('2026-12')?.end).toEqual(new Date('2027-01-01T00:00:00.000Z'));
    expect(parseStatementMonth('2028-02')?.end).toEqual(new Date('2028-03-01T00:00:00.000Z'));
  });

  test.each(['2026-13', '2026-00', '2026-1', '26-11', '2026-11-01', '2026/11', ' 2026-11', '0000-01', ''])(
    '%j is not a month',
    (text) => {
      expect(parseStatementMonth(text)).toBeUndefined();
    },
  );

  test('the month closes at 00:00 UTC on the 1st, not a millisecond earlier', () => {
    const november = parseStatementMonth('2026-11')!;
    expect(latestClosedMonth(new Date('2026-11-30T23:59:59.999Z')).month).toBe('2026-10');
    expect(hasMonthClosed(november, new Date('2026-11-30T23:59:59.999Z'))).toBe(false);
    expect(latestClosedMonth(new Date('2026-12-01T00:00:00.000Z')).month).toBe('2026-11');
    expect(hasMonthClosed(november, new Date('2026-12-01T00:00:00.000Z'))).toBe(true);
    // January's closed month is the previous year's December.
    expect(latestClosedMonth(new Date('2027-01-01T00:15:00.000Z')).month).toBe('2026-12');
  });

  test('a local time zone never shifts the month (the bounds are UTC)', () => {
    // 2026-12-01T00:30 UTC is still November 30th in America/Los_Angeles; the statement month is UTC.
    expect(latestClosedMonth(new Date('2026-12-01T00:30:00-00:00')).month).toBe('2026-11');
    expect(latestClosedMonth(new Date('2026-11-30T20:00:00-08:00')).month).toBe('2026-11');
  });
});
