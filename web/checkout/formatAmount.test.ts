import { formatTokenAmount, formatUsd } from './formatAmount';

describe('checkout amounts', () => {
  it.each([
    ['1234567891', 6, '1234.567891'],
    ['25500000', 6, '25.5'],
    ['25500000000000000000', 18, '25.5'],
    ['1', 18, '0.000000000000000001'],
    ['1000000000000000', 6, '1000000000'],
    ['0', 6, '0'],
  ])('%s base units with %i decimals show %s', (units, decimals, shown) => {
    expect(formatTokenAmount(units, decimals)).toBe(shown);
  });

  it('refuses anything that is not a base-unit integer', () => {
    expect(() => formatTokenAmount('1.5', 6)).toThrow();
    expect(() => formatTokenAmount('-1', 6)).toThrow();
  });

  it.each([
    ['25.5', '$25.50'],
    ['19.99', '$19.99'],
    ['7', '$7.00'],
    ['1234.567891', '$1,234.567891'],
    ['1000000000', '$1,000,000,000.00'],
    ['0.100000', '$0.10'],
  ])('USD %s shows %s', (amount, shown) => {
    expect(formatUsd(amount)).toBe(shown);
  });
});
