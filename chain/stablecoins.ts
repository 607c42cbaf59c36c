/**
 * The stablecoins a session can be paid in, with their real decimals (USDC/USDT 6, USDe 18), and the
 * key under which a deployment's `contracts` holds each token's address on a chain.
 */
export const STABLECOINS = [
  { symbol: 'USDC', decimals: 6, contractKey: 'usdc' },
  { symbol: 'USDT', decimals: 6, contractKey: 'usdt' },
  { symbol: 'USDe', decimals: 18, contractKey: 'usde' },
] as const;

export type StablecoinSymbol = (typeof STABLECOINS)[number]['symbol'];

/** The symbols alone, in the same order (a non-empty tuple, as zod enums take it). */
export const STABLECOIN_SYMBOLS = STABLECOINS.map((coin) => coin.symbol) as [
  StablecoinSymbol,
  ...StablecoinSymbol[],
];
