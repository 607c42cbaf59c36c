import { ceilDiv } from './ceilDiv';
import { MICRO_USD_PER_USD } from './microUsd';
import { PRICE_ANSWER_SCALE } from './usdPriceAnswers';

/**
 * Gas in money, exact: wei and token base units to bigint micro-dollars at a feed answer (USD with
 * ETH_USD_FEED_DECIMALS decimals), never floats. Conversions round up, so a limit or a charge is never
 * short by rounding.
 */

const WEI_PER_ETH = 10n ** 18n;
const BPS = 10_000n;

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
  return ceilDiv(wei * ethUsdAnswer * MICRO_USD_PER_USD, WEI_PER_ETH * PRICE_ANSWER_SCALE);
}

/**
 * What an included sponsored operation costs the merchant, exact: actualGasCost (wei) × ETH/USD × (1 +
 * markup bps / 10000), in micro-dollars, rounded up ONCE at the end (a sub-micro-dollar remainder is
 * charged as one micro-dollar; no intermediate rounding, so the figure is the exact product's ceiling):
 * ceil(wei × price × (10000 + markupBps) × 10^6 / (10^18 × 10^8 × 10000)).
 */
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
  return ceilDiv(
    actualGasCostWei * ethUsdAnswer * (BPS + BigInt(markupBps)) * MICRO_USD_PER_USD,
    WEI_PER_ETH * PRICE_ANSWER_SCALE * BPS,
  );
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
    10n ** BigInt(tokenDecimals) * PRICE_ANSWER_SCALE,
  );
}
