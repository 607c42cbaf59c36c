/**
 * Exact conversions between decimal strings and token base units. No floating point anywhere:
 * "12.5" USD in a 6-decimals token is 12500000n.
 */
export const DECIMAL_AMOUNT_PATTERN = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

export class AmountPrecisionError extends Error {
  override name = 'AmountPrecisionError';
}

/** `amount` (decimal string) × 10^decimals, exactly; throws when the amount has more fraction digits than the token. */
export function toBaseUnits(amount: string, decimals: number): bigint {
  const match = DECIMAL_AMOUNT_PATTERN.exec(amount);
  if (!match) throw new AmountPrecisionError(`"${amount}" is not a decimal amount`);
  const whole = match[1]!;
  const fraction = (match[2] ?? '.').slice(1);
  if (fraction.length > decimals)
    throw new AmountPrecisionError(`"${amount}" has more than ${decimals} decimals`);
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

/** The decimal string of `units` base units (no trailing zeros, no exponent). */
export function fromBaseUnits(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** `units` of a `fromDecimals` token in base units of `toDecimals`, at parity, rounded down (never more than held). */
export function rescaleUnitsRoundingDown(units: bigint, fromDecimals: number, toDecimals: number): bigint {
  return fromDecimals <= toDecimals
    ? units * 10n ** BigInt(toDecimals - fromDecimals)
    : units / 10n ** BigInt(fromDecimals - toDecimals);
}

/** numeric(16,6) reads back as "19.990000"; the API shows "19.99". */
export function normaliseDecimal(value: string): string {
  return value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '') : value;
}
