import { formatTimeRemaining } from './formatTimeRemaining';

const cases: [number, string][] = [
  [0, '0:00'],
  [-5_000, '0:00'],
  [999, '0:00'],
  [59_000, '0:59'],
  [3_599_999, '59:59'],
  [3_600_000, '1:00:00'],
  [3_723_000, '1:02:03'],
  [86_399_000, '23:59:59'],
  [2 * 86_400_000 + 3 * 3_600_000 + 59_000, '2d 3h'],
];

describe('countdown text', () => {
  it.each(cases)('%i ms remaining shows %s', (milliseconds, shown) => {
    expect(formatTimeRemaining(milliseconds)).toBe(shown);
  });
});
