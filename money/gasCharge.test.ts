import { gasChargeMicroUsd } from './gasPricing';
import { microUsdToFixed6 } from './microUsd';
import { ethUsdDecimalToAnswer } from './usdPriceAnswers';

describe('gas charge amount', () => {
  it('reads the stored ETH/USD snapshot exactly', () => {
    expect(ethUsdDecimalToAnswer('3000.00000000')).toBe(300_000_000_000n);
    expect(ethUsdDecimalToAnswer('3000.5')).toBe(300_050_000_000n);
    expect(ethUsdDecimalToAnswer('0.00000001')).toBe(1n);
    expect(() => ethUsdDecimalToAnswer('3000.123456789')).toThrow();
    expect(() => ethUsdDecimalToAnswer('-1')).toThrow();
  });

  it('charges cost × price × (1 + markup), exactly when it divides', () => {
    // 0.001 ETH at 3000 USD = 3 USD; +10 % = 3.3 USD.
    expect(
      gasChargeMicroUsd({ actualGasCostWei: 10n ** 15n, ethUsdAnswer: 300_000_000_000n, markupBps: 1000 }),
    ).toBe(3_300_000n);
    expect(gasChargeMicroUsd({ actualGasCostWei: 0n, ethUsdAnswer: 300_000_000_000n, markupBps: 1000 })).toBe(
      0n,
    );
  });

  it('rounds the exact product up once, never down', () => {
    // 1 wei at 3000 USD is 3e-15 USD: one micro-dollar.
    expect(gasChargeMicroUsd({ actualGasCostWei: 1n, ethUsdAnswer: 300_000_000_000n, markupBps: 0 })).toBe(
      1n,
    );
    // 333,333,333,333 wei × 3000 USD = 0.000999999999999 USD → 0.001 USD (1000 micro).
    expect(
      gasChargeMicroUsd({ actualGasCostWei: 333_333_333_333n, ethUsdAnswer: 300_000_000_000n, markupBps: 0 }),
    ).toBe(1000n);
  });

  it('formats micro-dollars as numeric(20,6)', () => {
    expect(microUsdToFixed6(3_300_000n)).toBe('3.300000');
    expect(microUsdToFixed6(1n)).toBe('0.000001');
  });
});
