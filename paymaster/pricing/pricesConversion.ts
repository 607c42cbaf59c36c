import { ETH_USD_FEED_DECIMALS } from '../../chain/priceFeeds';

/**
 * Exact money arithmetic for sponsorship limits: amounts are bigint micro-dollars (USD × 10^6, the
 * 6 fractional digits of our USD strings), never floats. Conversions round up, so a limit is never
 * under-charged by rounding.
 */

export const MICRO_USD_PER_USD = 1_000_000n;
const WEI_PER_ETH = 10n ** 18n;
const BPS = 10_000n;

const ceilDiv = (numerator: bigint, denominator: bigint): bigint =>
  (numerator + denominator - 1n) / denominator;

/** The most the operation can cost in wei: every gas limit (paymaster ones included) plus preVerificationGas, at maxFeePerGas. */
export function maxGasCostWei(gas: {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
  maxFeePerGas: bigint;
}): bigint {
  return (
    (gas.callGasLimit +
      gas.verificationGasLimit +
      gas.preVerificationGas +
      gas.paymasterVerificationGasLimit +
      gas.paymasterPostOpGasLimit) *
    gas.maxFeePerGas
  );
}

/** wei → micro-dollars at `ethUsdAnswer` (USD per ETH with ETH_USD_FEED_DECIMALS decimals), rounded up. */
export function weiToMicroUsd(wei: bigint, ethUsdAnswer: bigint): bigint {
  return ceilDiv(wei * ethUsdAnswer * MICRO_USD_PER_USD, WEI_PER_ETH * 10n ** BigInt(ETH_USD_FEED_DECIMALS));
}

/** `microUsd` plus `markupBps` basis points, rounded up. */
export function withMarkup(microUsd: bigint, markupBps: number): bigint {
  return ceilDiv(microUsd * (BPS + BigInt(markupBps)), BPS);
}

/** "12.5" / "0.000001" → micro-dollars. The input is a validated decimal USD string (≤ 6 decimals). */
export function usdToMicro(usd: string): bigint {
  const [whole, fraction = ''] = usd.split('.');
  return BigInt(whole!) * MICRO_USD_PER_USD + BigInt(fraction.padEnd(6, '0').slice(0, 6));
}

/** Micro-dollars → the shortest decimal USD string ("12.5", "3", "0.000001"). */
export function microToUsd(micro: bigint): string {
  const whole = micro / MICRO_USD_PER_USD;
  const fraction = (micro % MICRO_USD_PER_USD).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

/** An 8-decimal feed answer as a decimal string ("3000.00000000" style, exact). */
export function feedAnswerToDecimal(answer: bigint): string {
  const scale = 10n ** BigInt(ETH_USD_FEED_DECIMALS);
  return `${answer / scale}.${(answer % scale).toString().padStart(ETH_USD_FEED_DECIMALS, '0')}`;
}

/**
 * An ERC-20 gas rate (token base units per 1e18 wei, the paymaster's `exchangeRate`): the ETH/USD answer
 * over the token's USD answer (both with ETH_USD_FEED_DECIMALS decimals), in the token's base units, plus
 * `marginBps`, rounded up (the user pays the margin, never a fraction less).
 */
export function tokenGasRate({
  ethUsdAnswer,
  tokenUsdAnswer,
  tokenDecimals,
  marginBps,
}: {
  ethUsdAnswer: bigint;
  tokenUsdAnswer: bigint;
  tokenDecimals: number;
  marginBps: number;
}): bigint {
  return ceilDiv(
    ethUsdAnswer * 10n ** BigInt(tokenDecimals) * (BPS + BigInt(marginBps)),
    tokenUsdAnswer * BPS,
  );
}

/** The most an ERC-20 operation can take in token base units: the contract's pre-charge, ceil(maxCost × rate / 1e18). */
export function maxTokenCharge(maxCostWei: bigint, exchangeRate: bigint): bigint {
  return ceilDiv(maxCostWei * exchangeRate, WEI_PER_ETH);
}

/** Token base units → micro-dollars at `tokenUsdAnswer` (ETH_USD_FEED_DECIMALS decimals), rounded up. */
export function tokenToMicroUsd(amount: bigint, tokenUsdAnswer: bigint, tokenDecimals: number): bigint {
  return ceilDiv(
    amount * tokenUsdAnswer * MICRO_USD_PER_USD,
    10n ** BigInt(tokenDecimals) * 10n ** BigInt(ETH_USD_FEED_DECIMALS),
  );
}
