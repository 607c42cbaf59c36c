import { AmountPrecisionError, fromBaseUnits, toBaseUnits } from '../../../money/baseUnits';

/** "12.5" → 12500000000000000000n for 18 decimals; null for anything that is not a positive amount. */
export function parseAmount(text: string, decimals: number): bigint | null {
  const match = /^\s*(\d+)(?:\.(\d+))?\s*$/.exec(text);
  if (!match) return null;
  // A person may type "007.5": the leading zeros go before the one conversion reads it.
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  let units: bigint;
  try {
    units = toBaseUnits(match[2] === undefined ? whole : `${whole}.${match[2]}`, decimals);
  } catch (error) {
    if (error instanceof AmountPrecisionError) return null;
    throw error;
  }
  return units > 0n ? units : null;
}

/** Base units as "1,234.56" with `places` decimals, rounded down. */
export function formatAmount(units: bigint, decimals: number, places: number): string {
  const [whole = '0', fraction = ''] = fromBaseUnits(units, decimals).split('.');
  return `${whole.replace(/\B(?=(\d{3})+$)/g, ',')}.${fraction.padEnd(places, '0').slice(0, places)}`;
}
