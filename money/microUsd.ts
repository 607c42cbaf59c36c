import { fromBaseUnits, rescaleUnitsRoundingDown } from './baseUnits';
import { ceilDiv } from './ceilDiv';

/**
 * Micro-dollars: every USD amount the service counts is a bigint of USD × 10^6 (the 6 fractional digits
 * of its USD strings and of the numeric(·,6) columns), never a float.
 */

export const USD_DECIMALS = 6;
export const MICRO_USD_PER_USD = 10n ** BigInt(USD_DECIMALS);
const BPS = 10_000n;

/** "12.5" / "0.000001" → micro-dollars. The input is a validated decimal USD string (≤ 6 decimals). */
export function usdToMicro(usd: string): bigint {
  const [whole, fraction = ''] = usd.split('.');
  return (
    BigInt(whole!) * MICRO_USD_PER_USD + BigInt(fraction.padEnd(USD_DECIMALS, '0').slice(0, USD_DECIMALS))
  );
}

/** Micro-dollars → the shortest decimal USD string ("12.5", "3", "0.000001"). */
export function microToUsd(micro: bigint): string {
  return fromBaseUnits(micro, USD_DECIMALS);
}

/** Micro-dollars → the numeric(20,6) decimal string ("0.001234", "12.500000"). */
export function microUsdToFixed6(micro: bigint): string {
  return `${micro / MICRO_USD_PER_USD}.${(micro % MICRO_USD_PER_USD).toString().padStart(USD_DECIMALS, '0')}`;
}

/**
 * A dollar stablecoin's `units` as micro-dollars (USD × 10^6), rounded down: what a settlement is worth
 * in the 6-decimal USD columns, never more than was received.
 */
export function toMicroUsdRoundingDown(units: bigint, decimals: number): bigint {
  return rescaleUnitsRoundingDown(units, decimals, USD_DECIMALS);
}

/** `microUsd` plus `markupBps` basis points, rounded up. */
export function withMarkup(microUsd: bigint, markupBps: number): bigint {
  return ceilDiv(microUsd * (BPS + BigInt(markupBps)), BPS);
}
