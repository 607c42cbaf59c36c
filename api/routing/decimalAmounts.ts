import { z } from 'zod';
import { DECIMAL_AMOUNT_PATTERN, toBaseUnits } from '../../money/baseUnits';

/** Request fields that carry money: decimal strings, judged exactly in base units (never floats). */

const MAX_AMOUNT_UNITS = toBaseUnits('1000000000', 6);

/** Decimal string, at most `fractionDigits` decimals; compared exactly in base units. */
export const decimalString = (fractionDigits: number) =>
  z
    .string({ error: 'must be a decimal string' })
    .regex(DECIMAL_AMOUNT_PATTERN, 'must be a decimal string such as "19.99"')
    .refine(
      (value) => (value.split('.')[1] ?? '').length <= fractionDigits,
      `must have at most ${fractionDigits} decimals`,
    );

// zod runs every refinement even after the pattern failed: each one only judges well-formed values.
export const unitsOf = (value: string) =>
  DECIMAL_AMOUNT_PATTERN.test(value) && (value.split('.')[1] ?? '').length <= 6
    ? toBaseUnits(value, 6)
    : undefined;

export const usdAmount = decimalString(6)
  .refine((value) => (unitsOf(value) ?? 1n) > 0n, 'must be greater than 0')
  .refine((value) => (unitsOf(value) ?? 0n) <= MAX_AMOUNT_UNITS, 'must be at most 1000000000');
