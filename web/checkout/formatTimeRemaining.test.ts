import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
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

  it('the page script formats the countdown by the same rule', () => {
    // The client script exposes nothing global; evaluate only its formatter, found by name.
    const script = readFileSync(join(__dirname, 'checkout.client.js'), 'utf8');
    const source = /function formatTimeRemaining\([\s\S]*?\n {2}}\n/.exec(script)?.[0];
    expect(source).toBeDefined();
    const clientFormat = runInNewContext(`(${source})`) as (milliseconds: number) => string;
    for (const [milliseconds, shown] of cases) expect(clientFormat(milliseconds)).toBe(shown);
  });
});
