import { formatTimeLeft, formatTimeRemaining } from './timeLeft';

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

describe('time left in words', () => {
  it.each([
    [6 * 86_400 + 23 * 3600 + 59, '6 d 23 h', '6 d 23 h'],
    [3 * 3600 + 12 * 60 + 5, '3 h 12 min', '3 h 12 min'],
    [4 * 60 + 10, '4 min 10 s', '5 min'],
    [45, '45 s', '1 min'],
    [44.2, '45 s', '1 min'],
    [0, '0 s', '1 min'],
    [-3, '0 s', '1 min'],
  ])('%d s left reads %p on the yield site and %p on the dashboard', (seconds, site, dashboard) => {
    expect(formatTimeLeft(seconds, 'second')).toBe(site);
    expect(formatTimeLeft(seconds, 'minute')).toBe(dashboard);
  });
});
