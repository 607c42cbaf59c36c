import { maxGasCostWei, weiToMicroUsd } from './gasPricing';
import { microToUsd, usdToMicro, withMarkup } from './microUsd';
import { feedAnswerToDecimal } from './usdPriceAnswers';

describe('exact USD arithmetic for sponsorship limits', () => {
  it('sums every gas limit, paymaster ones included, at maxFeePerGas', () => {
    expect(
      maxGasCostWei({
        callGasLimit: 196_608n,
        verificationGasLimit: 196_608n,
        preVerificationGas: 65_536n,
        paymasterVerificationGasLimit: 50_000n,
        paymasterPostOpGasLimit: 7n,
        maxFeePerGas: 2_000_000_000n,
      }),
    ).toBe(508_759n * 2_000_000_000n);
  });

  it('converts wei to micro-dollars at an 8-decimal answer, rounding up', () => {
    expect(weiToMicroUsd(10n ** 18n, 3_000n * 10n ** 8n)).toBe(3_000_000_000n);
    expect(weiToMicroUsd(1_017_504_000_000_000n, 3_000n * 10n ** 8n)).toBe(3_052_512n);
    // 1 wei is worth far less than a micro-dollar: still counts as one.
    expect(weiToMicroUsd(1n, 3_000n * 10n ** 8n)).toBe(1n);
    expect(weiToMicroUsd(0n, 3_000n * 10n ** 8n)).toBe(0n);
  });

  it('adds the markup in basis points, rounding up', () => {
    expect(withMarkup(3_052_512n, 1000)).toBe(3_357_764n);
    expect(withMarkup(1_000_000n, 0)).toBe(1_000_000n);
    expect(withMarkup(1n, 1)).toBe(2n);
  });

  it('reads and writes decimal USD strings exactly', () => {
    expect(usdToMicro('12.5')).toBe(12_500_000n);
    expect(usdToMicro('0.000001')).toBe(1n);
    expect(usdToMicro('1000000000')).toBe(10n ** 15n);
    expect(microToUsd(12_500_000n)).toBe('12.5');
    expect(microToUsd(3_357_764n)).toBe('3.357764');
    expect(microToUsd(5_000_000n)).toBe('5');
    expect(feedAnswerToDecimal(300_012_345_678n)).toBe('3000.12345678');
  });
});
