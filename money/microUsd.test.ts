import { microToUsd, microUsdToFixed6, toMicroUsdRoundingDown, usdToMicro } from './microUsd';

describe('micro-dollars', () => {
  it('takes a stablecoin amount at its dollar value, rounding down', () => {
    expect(toMicroUsdRoundingDown(19_990_000n, 6)).toBe(19_990_000n);
    expect(toMicroUsdRoundingDown(19_990_000_999_999_999_999n, 18)).toBe(19_990_000n);
    expect(toMicroUsdRoundingDown(1_999n, 2)).toBe(19_990_000n);
  });

  it('keeps the two USD spellings apart: the API’s shortest and the numeric(20,6) column', () => {
    expect(microToUsd(19_990_000n)).toBe('19.99');
    expect(microUsdToFixed6(19_990_000n)).toBe('19.990000');
    expect(usdToMicro('19.990000')).toBe(19_990_000n);
    expect(microToUsd(0n)).toBe('0');
  });
});
