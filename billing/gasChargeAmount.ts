import { ETH_USD_FEED_DECIMALS } from '../chain/priceFeeds';
import { MICRO_USD_PER_USD } from '../paymaster/pricing/pricesConversion';

/**
 * What an included sponsored operation costs the merchant, exact: actualGasCost (wei) × ETH/USD × (1 +
 * markup bps / 10000), in bigint micro-dollars, rounded up ONCE at the end (a sub-micro-dollar remainder
 * is charged as one micro-dollar; no intermediate rounding, so the figure is the exact product's ceiling).
 */

const WEI_PER_ETH = 10n ** 18n;
const BPS = 10_000n;
const PRICE_SCALE = 10n ** BigInt(ETH_USD_FEED_DECIMALS);
/** The numeric(20,8) ETH/USD snapshot as stored ("3000.00000000", "3000.5"). */
const ETH_USD_DECIMAL = new RegExp(`^(\\d{1,12})(?:\\.(\\d{1,${ETH_USD_FEED_DECIMALS}}))?$`);

/** "3000.12345678" → 300012345678n (USD per ETH with the feed's 8 decimals). */
export function ethUsdDecimalToAnswer(price: string): bigint {
  const match = ETH_USD_DECIMAL.exec(price);
  if (!match)
    throw new Error(`not an ETH/USD decimal with at most ${ETH_USD_FEED_DECIMALS} decimals: ${price}`);
  return BigInt(match[1]!) * PRICE_SCALE + BigInt((match[2] ?? '').padEnd(ETH_USD_FEED_DECIMALS, '0'));
}

/** ceil(wei × price × (10000 + markupBps) × 10^6 / (10^18 × 10^8 × 10000)) micro-dollars. */
export function gasChargeMicroUsd({
  actualGasCostWei,
  ethUsdAnswer,
  markupBps,
}: {
  actualGasCostWei: bigint;
  ethUsdAnswer: bigint;
  markupBps: number;
}): bigint {
  if (actualGasCostWei < 0n || ethUsdAnswer <= 0n || !Number.isInteger(markupBps) || markupBps < 0)
    throw new Error('gas charge inputs must be non-negative (price positive, markup an integer)');
  const numerator = actualGasCostWei * ethUsdAnswer * (BPS + BigInt(markupBps)) * MICRO_USD_PER_USD;
  const denominator = WEI_PER_ETH * PRICE_SCALE * BPS;
  return (numerator + denominator - 1n) / denominator;
}

/** Micro-dollars → the numeric(20,6) decimal string ("0.001234", "12.500000"). */
export function microUsdToFixed6(micro: bigint): string {
  return `${micro / MICRO_USD_PER_USD}.${(micro % MICRO_USD_PER_USD).toString().padStart(6, '0')}`;
}
