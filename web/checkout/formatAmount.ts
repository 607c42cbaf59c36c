import { DECIMAL_AMOUNT_PATTERN, fromBaseUnits } from '../../money/baseUnits';

/**
 * Amounts as the customer reads them, exactly: string and bigint arithmetic only, never floats.
 * The token amount is what the wallet must send, so it is never rounded or grouped (it is copied).
 */

/** `1234567891` base units of a 6-decimals token → `1234.567891`. */
export function formatTokenAmount(baseUnits: string, decimals: number): string {
  if (!/^[0-9]+$/.test(baseUnits)) throw new Error(`"${baseUnits}" is not a base-unit amount`);
  return fromBaseUnits(BigInt(baseUnits), decimals);
}

/** Decimal USD `1234.5` → `$1,234.50`: at least two decimals, every significant digit kept. */
export function formatUsd(amount: string): string {
  if (!DECIMAL_AMOUNT_PATTERN.test(amount)) throw new Error(`"${amount}" is not a decimal amount`);
  const [whole, fraction = ''] = amount.split('.') as [string, string?];
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  const cents = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `$${grouped}.${cents}`;
}
