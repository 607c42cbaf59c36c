import { AmountPrecisionError, fromBaseUnits, rescaleUnitsRoundingDown, toBaseUnits } from './baseUnits';

describe('token amounts', () => {
  it.each([
    ['12.5', 6, 12_500_000n],
    ['0.000001', 6, 1n],
    ['1000000000', 18, 1_000_000_000_000_000_000_000_000_000n],
    ['0.1', 18, 100_000_000_000_000_000n],
    ['19.99', 6, 19_990_000n],
    ['0', 6, 0n],
  ])('%s with %i decimals is %s base units, and back', (amount, decimals, units) => {
    expect(toBaseUnits(amount, decimals)).toBe(units);
    expect(fromBaseUnits(units, decimals)).toBe(amount);
  });

  it('0.1 + 0.2 style amounts stay exact', () => {
    expect(toBaseUnits('0.1', 6) + toBaseUnits('0.2', 6)).toBe(toBaseUnits('0.3', 6));
  });

  it.each(['1.0000001', '1e3', '-1', '01', '.5', '1.', ' 1', '0x10'])('refuses %p', (amount) => {
    expect(() => toBaseUnits(amount, 6)).toThrow(AmountPrecisionError);
  });
});

describe('rescaling between tokens at parity', () => {
  it.each([
    [12_500_000n, 6, 18, 12_500_000_000_000_000_000n],
    [12_500_000_999_999_999_999n, 18, 6, 12_500_000n],
    [7n, 6, 6, 7n],
    [999_999_999_999n, 18, 6, 0n],
  ])('%s base units at %i decimals are, at %i decimals, %s (rounded down)', (units, from, to, rescaled) => {
    expect(rescaleUnitsRoundingDown(units, from, to)).toBe(rescaled);
  });
});
