/**
 * USD prices as price feeds give them: bigint answers with ETH_USD_FEED_DECIMALS decimals (Chainlink's
 * ETH/USD and stablecoin/USD feeds, and the local stand-in), and the numeric(20,8) snapshots stored of them.
 */

/** ETH/USD answers carry 8 decimals on Chainlink; the local feed uses the same. */
export const ETH_USD_FEED_DECIMALS = 8;
export const PRICE_ANSWER_SCALE = 10n ** BigInt(ETH_USD_FEED_DECIMALS);

/** The numeric(20,8) ETH/USD snapshot as stored ("3000.00000000", "3000.5"). */
const ETH_USD_DECIMAL = new RegExp(`^(\\d{1,12})(?:\\.(\\d{1,${ETH_USD_FEED_DECIMALS}}))?$`);

/** "3000.12345678" → 300012345678n (USD per ETH with the feed's 8 decimals). */
export function ethUsdDecimalToAnswer(price: string): bigint {
  const match = ETH_USD_DECIMAL.exec(price);
  if (!match)
    throw new Error(`not an ETH/USD decimal with at most ${ETH_USD_FEED_DECIMALS} decimals: ${price}`);
  return BigInt(match[1]!) * PRICE_ANSWER_SCALE + BigInt((match[2] ?? '').padEnd(ETH_USD_FEED_DECIMALS, '0'));
}

/** An 8-decimal feed answer as a decimal string ("3000.00000000" style, exact). */
export function feedAnswerToDecimal(answer: bigint): string {
  return `${answer / PRICE_ANSWER_SCALE}.${(answer % PRICE_ANSWER_SCALE).toString().padStart(ETH_USD_FEED_DECIMALS, '0')}`;
}
